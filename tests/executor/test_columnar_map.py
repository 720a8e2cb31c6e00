"""MAP columns in the columnar executor: Arrow map columns decode to the row code's dicts
(Java's HashMap order kept), and the map functions with a vector form (``m['k']`` with a
constant key, ``size`` / CARDINALITY) compute what the row code computes. No Spark."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.executor.arrow import convert
from flowc.executor.arrow.chain import _kernels
from flowc.executor.arrow.kernels import as_array
from flowc.maps import str_to_map
from flowc.operators import MapOp
from flowc.parser import compile_source
from flowc.types import STRING, Schema, map_of

SCHEMA = Schema.of(("m", map_of(STRING, STRING)), ("c", STRING))
texts = st.one_of(st.none(), st.sampled_from(["a=1,b=2", "", "a", "x=,a=3,a=4", "Aa=1,BB=2",
                                              "key7=v", "q=1"]),
                  st.text(alphabet="ab=,1", max_size=12))


def _fns() -> Any:
    text = ("source s (c string) from csv 'x.csv';\n"
            "s | map str_to_map(c) as m, c\n"
            "  | map element_at(m, 'a') as x, size(m) as n, m is null as z, element_at(m, 'Aa')"
            " as y, m, c | print;\n")
    sg = compile_source(text, "t.flow").env.get_job_graph().stream_graph
    return [n.operator.fn for n in sg.nodes.values() if isinstance(n.operator, MapOp)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(texts, min_size=1, max_size=20))
def test_map_functions_equal_row_code(values: list[Any]) -> None:
    make, use = _fns()
    rows = [make((c,)) for c in values]
    batch = convert.from_rows(rows, [None] * len(rows), convert.arrow_schema(SCHEMA)).batch
    # the map column decodes to the same dicts, entry order included
    decoded = convert.Chunk(batch, convert.pa.nulls(len(rows), convert.TS)).rows()
    assert [list(r[0].items()) if r[0] is not None else None for r in decoded] == \
        [list(r[0].items()) if r[0] is not None else None for r in rows]
    kernels = _kernels(use, SCHEMA)
    assert kernels is not None
    got = list(zip(*[as_array(k(batch), batch.num_rows).to_pylist() for k in kernels[:4]]))
    want = [use(r)[:4] for r in rows]
    assert got == want


def test_hash_order_survives_arrow() -> None:
    m = str_to_map("BB=2,Aa=1,zz=3")
    batch = convert.from_rows([(m, "x")], [None], convert.arrow_schema(SCHEMA)).batch
    [(back, _)] = convert.Chunk(batch, convert.pa.nulls(1, convert.TS)).rows()
    assert list(back.items()) == list(m.items())
