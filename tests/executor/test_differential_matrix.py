"""Explicit differential coverage (the hypothesis test samples these at random): every
partitioner x every window kind x chaining on/off, each window kind in STREAMING and in
BATCH, every window function kind, every key type, several max parallelisms. One job per
(window kind, chaining) holds one pipeline per partitioner, so Spark runs six jobs; each
sink must match the reference executor."""

from __future__ import annotations

import random
from typing import Any

import pytest

from flowc.executor import run_job_graph, run_reference

from .helpers import env_for, timestamped
from .test_differential import KEY_POOLS, WINDOW_FNS, add_pipeline, assert_same_results

pytestmark = pytest.mark.spark

# key_by (HASH) ends every pipeline; "par" is the default rebalance into another
# parallelism.
PARTITIONERS = ["rebalance", "rescale", "shuffle", "broadcast", "global", "forward",
                "custom", "par"]
KEY_KINDS = sorted(KEY_POOLS)
MAX_PARS = [None, 3, 7, 4096]


def _data(kind: str, seed: int) -> list[tuple[Any, int, int]]:
    rnd = random.Random(seed)
    keys = KEY_POOLS[kind]
    # Mostly rising timestamps with jumps back: late and allowed-late records.
    out, ts = [], 0
    for _ in range(40):
        ts = ts + rnd.randrange(0, 900) if rnd.random() < 0.8 else max(0, ts - 2500)
        out.append((rnd.choice(keys), ts, rnd.randrange(-50, 50)))
    return out


def _job(case: int, terminal: str, chaining: bool, batch: bool) -> Any:
    env = env_for(2, batch=batch, chaining=chaining)
    max_par = MAX_PARS[case % len(MAX_PARS)]
    if max_par is not None:
        env.set_max_parallelism(max_par)
    for i, part in enumerate(PARTITIONERS):
        j = i + case
        fn = WINDOW_FNS[j % len(WINDOW_FNS)]
        kind = KEY_KINDS[j % len(KEY_KINDS)]
        s = timestamped(env, _data(kind, j), delay=500 * (j % 2))
        add_pipeline(s, [(part, 1 + j % 3)], terminal, 1000 * (j % 2), "", fn,
                     suffix=f"-{part}")
    return env.get_job_graph()


# Chaining on/off for every window kind; each window kind once in each mode.
CASES = [("tumbling", True, False), ("tumbling", False, True),
         ("sliding", True, True), ("sliding", False, False),
         ("session", True, False), ("session", False, True)]


@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[f"{t}-{'chained' if c else 'unchained'}-{'batch' if b else 'stream'}"
                              for t, c, b in CASES])
def test_every_partitioner_and_window_function(spark: Any, case: int) -> None:
    terminal, chaining, batch = CASES[case]
    jg = _job(case, terminal, chaining, batch)
    expected = run_reference(jg)
    actual = run_job_graph(jg)
    assert_same_results(actual, expected, batch)
    outs = [k for k in expected.collected if k.startswith("out")]
    assert len(outs) == len(PARTITIONERS)
    assert all(expected.collected[k] for k in outs)  # every pipeline produced windows
    if not batch:  # the data has late records: some are dropped or go to the side outputs
        lates = sum(len(v) for k, v in expected.collected.items() if k.startswith("late"))
        assert expected.late_records_dropped + lates > 0


def test_matrix_covers_every_combination() -> None:
    assert {(t, c) for t, c, _ in CASES} == {(t, c) for t in ("tumbling", "sliding", "session")
                                            for c in (True, False)}
    assert {(t, b) for t, _, b in CASES} == {(t, b) for t in ("tumbling", "sliding", "session")
                                            for b in (True, False)}
    fns = {WINDOW_FNS[(i + case) % len(WINDOW_FNS)]
           for case in range(len(CASES)) for i in range(len(PARTITIONERS))}
    assert fns == set(WINDOW_FNS)
    for case in range(len(CASES)):  # every job uses every window function kind
        assert {WINDOW_FNS[(i + case) % len(WINDOW_FNS)]
                for i in range(len(PARTITIONERS))} == set(WINDOW_FNS)
