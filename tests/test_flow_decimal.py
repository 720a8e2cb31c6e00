""".flow's ``decimal(p, s)``: the exact DECIMAL of flowc's SQL (flowc.decimals), so a .flow
pipeline over the currency-conversion orders prints the rows Flink 2.3 computed for the same
SQL (tests/sql/flink_results/decimal.json, recorded once by record_decimal.py there):
arithmetic result types and HALF_UP rounding, literals beside a decimal, casts, comparisons
and aggregates; csv and json reading and writing; positioned errors for bad types."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flowc.errors import FlowcError
from flowc.executor import run_reference
from flowc.parser import compile_source

HERE = Path(__file__).parent / "sql" / "flink_results"
sys.path.insert(0, str(HERE))
from decimal_data import orders_csv  # noqa: E402

FLINK = {c["query"]: c["rows"] for c in
         json.loads((HERE / "decimal.json").read_text(encoding="utf-8"))["cases"]
         if "rows" in c}
HEAD = """set mode = batch;
source orders (id int, cur string, amount decimal(10, 2), rate decimal(10, 4))
  from csv '{path}' options (header = false, null_value = '');
"""

# (the recorded SQL, the same query in .flow)
PAIRS = [
    ("SELECT id, cur, amount * rate AS usd FROM orders",
     "orders | map id, cur, amount * rate as usd"),
    ("SELECT id, CAST(amount * rate AS DECIMAL(12, 2)) AS usd FROM orders",
     "orders | map id, cast(amount * rate as decimal(12, 2)) as usd"),
    ("SELECT id, amount + rate, amount - rate, amount / rate, MOD(amount, rate) FROM orders",
     "orders | map id, amount + rate as a, amount - rate as b, amount / rate as c, "
     "amount % rate as d"),
    ("SELECT id, amount * id, id / amount, amount * 1.1, amount / 3, amount - 0.005 FROM orders",
     "orders | map id, amount * id as a, id / amount as b, amount * 1.1 as c, amount / 3 as d, "
     "amount - 0.005 as e"),
    ("SELECT id, CAST(amount AS DOUBLE), CAST(amount AS BIGINT), CAST(amount AS STRING), "
     "CAST(rate AS DECIMAL(5, 1)), -amount FROM orders",
     "orders | map id, cast(amount as double) as a, cast(amount as int) as b, "
     "cast(amount as string) as c, cast(rate as decimal(5, 1)) as d, -amount as e"),
    ("SELECT id, CAST(amount * 1000000 AS DECIMAL(10, 2)), CAST(CAST(id AS STRING) || '.555' "
     "AS DECIMAL(6, 2)), CAST(rate * 3.3 AS DECIMAL(4, 3)) FROM orders",
     "orders | map id, cast(amount * 1000000 as decimal(10, 2)) as a, "
     "cast(cast(id as string) || '.555' as decimal(6, 2)) as b, "
     "cast(rate * 3.3 as decimal(4, 3)) as c"),
    ("SELECT id, amount FROM orders WHERE amount > 5000 AND rate < 1.1",
     "orders | filter amount > 5000 and rate < 1.1 | map id, amount"),
    ("SELECT id, amount, rate FROM orders WHERE amount * rate >= 500.5 OR amount = 47.11",
     "orders | filter amount * rate >= 500.5 or amount = 47.11 | map id, amount, rate"),
    ("SELECT cur, SUM(amount), AVG(amount), MIN(amount), MAX(amount), COUNT(amount) FROM orders "
     "GROUP BY cur",
     "orders | key by cur | aggregate sum(amount) as s, avg(amount) as a, min(amount) as mn, "
     "max(amount) as mx, count(amount) as n"),
]


def _printed(tmp_path: Path, pipeline: str, head: str = HEAD) -> list[str]:
    (tmp_path / "orders.csv").write_text(orders_csv(), encoding="utf-8")
    script = compile_source(head.format(path=tmp_path / "orders.csv") + pipeline + " | print;\n",
                            "t.flow")
    return list(run_reference(script.env.get_job_graph()).printed)


def _rows(lines: list[str]) -> list[list[str | None]]:
    rows = []
    for line in lines:
        assert line.startswith("+I[") and line.endswith("]"), line
        rows.append([None if v == "null" else v for v in line[3:-1].split(", ")])
    return sorted(rows, key=lambda r: [x or "" for x in r])


def test_the_pairs_are_recorded() -> None:
    assert all(sql in FLINK for sql, _ in PAIRS)


@pytest.mark.parametrize(("sql", "flow"), PAIRS, ids=[f[:50] for _, f in PAIRS])
def test_flow_decimal_is_flinks(tmp_path: Path, sql: str, flow: str) -> None:
    assert _rows(_printed(tmp_path, flow)) == FLINK[sql]


def test_csv_and_json_round_trip(tmp_path: Path) -> None:
    # csv: with the scale (12.30, never 12.3 or 1.23E+1); json: a number; read back exactly
    out_csv, out_json = tmp_path / "out.csv", tmp_path / "out.jsonl"
    _printed(tmp_path, f"orders | filter id <= 40 | map id, amount * rate as usd, amount "
                       f"| write csv '{out_csv}'; orders | filter id < 0")
    _printed(tmp_path, f"orders | filter id <= 40 | map id, amount * rate as usd, amount "
                       f"| write json '{out_json}'; orders | filter id < 0")
    first = (out_csv.read_text() if out_csv.is_file() else
             next(p for p in sorted(out_csv.rglob("*")) if p.is_file()).read_text())
    assert "1,8724.337160,4743.55" in first.splitlines()
    jfile = out_json if out_json.is_file() else next(
        p for p in sorted(out_json.rglob("*")) if p.is_file())
    record = json.loads(jfile.read_text().splitlines()[0])
    assert record == {"id": 1, "usd": 8724.337160, "amount": 4743.55}
    back = """set mode = batch;
source orders (id int, usd decimal(21, 6), amount decimal(10, 2)) from json '{path}';
"""
    lines = _printed(tmp_path, "orders | filter id = 37 or id = 1 | map id, usd, amount + 0.001 "
                               "as a", back.replace("{path}", str(jfile)))
    assert sorted(lines) == ["+I[1, 8724.337160, 4743.551]", "+I[37, null, null]"]


@pytest.mark.parametrize(("written", "message", "hint"), [
    ("decimal(40, 2)", "the precision of decimal must be between 1 and 38, not 40",
     "did you mean 'decimal(38, 2)'?"),
    ("decimal(5, 7)", "the scale of decimal must be between 0 and the precision (5), not 7",
     "did you mean 'decimal(7, 5)'?"),
    ("decimal", "decimal needs its precision and scale", "did you mean 'decimal(10, 2)'?"),
    ("numeric(10, 2)", "unknown type 'numeric'", "did you mean 'decimal(10, 2)'?"),
    ("numeric", "unknown type 'numeric'", "did you mean 'decimal(10, 2)'?"),
    ("int(3)", "'int' takes no parameters", "decimal(p, s)"),
])
def test_bad_decimal_types_are_positioned_errors(written: str, message: str, hint: str) -> None:
    text = f"source t (id int, price {written}) from csv 'x.csv';\nt | print;\n"
    with pytest.raises(FlowcError) as info:
        compile_source(text, "t.flow")
    err = info.value.errors[0] if hasattr(info.value, "errors") else info.value
    assert err.message == message
    assert hint in (err.hint or "")
    assert (err.span.line, err.span.column) == (1, 25)


def test_decimal_p_is_scale_0_and_casts_round_half_up(tmp_path: Path) -> None:
    head = "set mode = batch;\nsource t (x decimal(12)) from values (7), (-7);\n"
    lines = _printed(tmp_path, "t | map x, cast(x / 2 as decimal(5, 0)) as h, "
                               "cast(x / 2 as decimal(2, 1)) as r", head)
    assert sorted(lines) == ["+I[-7, -4, -3.5]", "+I[7, 4, 3.5]"]


def test_the_columnar_executor_runs_decimal_jobs_with_kernels(tmp_path: Path) -> None:
    # decimal128 columns and kernels (arrow/deckernels.py): the map is vectorised
    from flowc.executor.arrow.chain import _kernels
    from flowc.executor.arrow.plan import plan_members

    (tmp_path / "orders.csv").write_text(orders_csv(), encoding="utf-8")
    script = compile_source(HEAD.format(path=tmp_path / "orders.csv") +
                            "orders | map id, amount * rate as usd | print;\n", "t.flow")
    members = plan_members(script.env.get_job_graph())
    assert not isinstance(members, str), members
    [chain] = members.values()
    [m] = [m for m in chain if m.kind == "map"]
    assert _kernels(m.spec.fn, m.in_schema) is not None


def test_a_udf_decimal_result_is_fitted_to_its_type(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Flink converts a Python UDF's Decimal to the declared DECIMAL(p, s): HALF_UP, null
    # when too wide
    (tmp_path / "dec_udfs.py").write_text(
        "from decimal import Decimal\n"
        "def tax(x):\n    return None if x is None else x * Decimal('1.19')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    head = ("set mode = batch;\nimport udf dec_udfs.tax(decimal(10, 2)) -> decimal(12, 2);\n"
            "import udf dec_udfs.tax(decimal(10, 2)) -> decimal(3, 1) as narrow;\n"
            "source t (x decimal(10, 2)) from values (10.05), (null);\n")
    lines = _printed(tmp_path, "t | map x, tax(x) as y, narrow(x) as z", head)
    assert sorted(lines) == ["+I[10.05, 11.96, 12.0]", "+I[null, null, null]"]


@pytest.mark.spark
def test_flow_decimal_on_spark(tmp_path: Path) -> None:
    # Spark's executor runs the decimal job row by row and prints Flink's rows
    from flowc.executor import get_spark, run_job_graph

    get_spark("local[2]")  # the test session's master (tests/executor/conftest.py)
    sql, flow = PAIRS[3]
    (tmp_path / "orders.csv").write_text(orders_csv(), encoding="utf-8")
    script = compile_source(HEAD.format(path=tmp_path / "orders.csv") + flow + " | print;\n",
                            "t.flow")
    lines = [x.split("> ", 1)[-1] for x in run_job_graph(script.env.get_job_graph()).printed]
    assert _rows(lines) == FLINK[sql]
