"""The BATCH map-side combiner (``spark/combine.py``) calls the plain key function."""

from __future__ import annotations

from flowc.executor.spark.combine import Combiner
from flowc.operators import CodeFn, WindowOp
from flowc.transformations import KeySelector
from flowc.windowing import TumblingEventTimeWindows


def _first(r: tuple[str, int]) -> str:
    return r[0]


def test_combiner_unwraps_a_key_selector_around_a_code_fn() -> None:
    key = KeySelector(CodeFn(_first, "r[0]", ("r",)), ("k",), "k")
    spec = WindowOp(assigner=TumblingEventTimeWindows.of(10), reduce_fn=lambda a, b: a)
    comb = Combiner(spec, key, 128, 2)
    assert comb.key is _first  # not KeySelector.__call__ -> CodeFn.__call__ -> _first
    comb.add(("a", 1), 3)
    comb.add(("a", 2), 4)
    assert list(comb.groups) == [("a", 0, 10)]
