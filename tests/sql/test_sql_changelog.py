"""flowc's changelog against Flink 2.3's, recorded once (changelog/record_changelog.py, not
run here): for each query flowc runs, the lines its print sink writes equal the lines
Flink's print connector wrote (row kinds, order and the print format of every value) at
parallelism 1; at parallelism 2 the lines per key keep Flink's order and the changelog
applied gives Flink's final table."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from flowc.executor import run_reference
from flowc.rowkind import materialize
from flowc.sql import compile_sql

HERE = Path(__file__).parent / "changelog"
sys.path.insert(0, str(HERE))
from data import ORDERS, ORDERS_COLUMNS, USERS, USERS_COLUMNS  # noqa: E402

from printed import rows as printed_rows  # noqa: E402

FLINK = {c["query"]: c for c in json.loads((HERE / "changelog.json").read_text())["cases"]}

JOINS = [
    "SELECT o.order_id, u.name FROM orders o JOIN users u ON o.user_id = u.user_id",
    "SELECT o.order_id, u.name FROM orders o LEFT JOIN users u ON o.user_id = u.user_id",
    "SELECT o.order_id, u.name FROM orders o RIGHT JOIN users u ON o.user_id = u.user_id",
    "SELECT o.order_id, u.name, u.user_id FROM orders o FULL JOIN users u ON o.user_id = u.user_id",
    "SELECT u.name, c.n FROM users u JOIN (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) c ON u.user_id = c.user_id",
    "SELECT c.user_id, c.n, u.country FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) c LEFT JOIN users u ON u.user_id = c.user_id",
]

# The recorded queries flowc runs, each with how many leading columns are its key (the
# GROUP BY columns; None: a GROUP BY over an updating input, whose changelog per key
# depends on how the updates of several upstream subtasks interleave, or a non-keyed
# aggregate (parallelism 1) whose rows reach several print subtasks: only the final table
# is compared at parallelism 2; joins: see test_join_result_matches_flink).
SUPPORTED: dict[str, int | None] = {
    "SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id": 1,
    "SELECT user_id, SUM(amount) AS s, MIN(amount) AS mn, MAX(amount) AS mx FROM orders GROUP BY user_id": 1,
    "SELECT user_id, MAX(amount) AS mx FROM orders GROUP BY user_id": 1,
    "SELECT product, AVG(amount) AS a, COUNT(amount) AS c FROM orders GROUP BY product": 1,
    "SELECT product, COUNT(DISTINCT user_id) AS users FROM orders GROUP BY product": 1,
    "SELECT product, SUM(price) AS total, MAX(ts) AS last_ts FROM orders GROUP BY product": 1,
    "SELECT user_id, product, COUNT(*) AS n FROM orders GROUP BY user_id, product": 2,
    "SELECT vip, MIN(price) AS lo, MAX(price) AS hi FROM orders GROUP BY vip": 1,
    "SELECT user_id, MIN(amount) AS mn FROM orders GROUP BY user_id HAVING MIN(amount) > 4": 1,
    "SELECT user_id, SUM(amount) AS s FROM orders GROUP BY user_id HAVING SUM(amount) < 20": 1,
    "SELECT * FROM (SELECT product, COUNT(*) AS n FROM orders GROUP BY product) WHERE n <> 2": 1,
    "SELECT n, COUNT(*) AS users FROM (SELECT user_id, COUNT(*) AS n FROM orders GROUP BY user_id) GROUP BY n": None,
    "SELECT mx, COUNT(*) AS c, SUM(s) AS total FROM (SELECT user_id, MAX(amount) AS mx, SUM(amount) AS s FROM orders GROUP BY user_id) GROUP BY mx": None,
    "SELECT s > 15 AS big, COUNT(DISTINCT user_id) AS users FROM (SELECT user_id, SUM(amount) AS s FROM orders GROUP BY user_id) GROUP BY s > 15": None,
    # MAX over a column that only grows ignores retractions, as Flink's planner decides
    "SELECT COUNT(*) AS n_groups, MAX(n) AS biggest, MIN(n) AS smallest FROM (SELECT product, COUNT(*) AS n FROM orders GROUP BY product)": None,
    "SELECT COUNT(*) AS n FROM orders": None,
    "SELECT COUNT(*) AS n, SUM(amount) AS s, MAX(price) AS mx, AVG(price) AS av FROM orders": None,
    "SELECT amount % 3 AS b, COUNT(*) AS n FROM orders GROUP BY amount % 3": 1,
    "SELECT UPPER(product) AS p, SUM(amount) AS s FROM orders GROUP BY UPPER(product)": 1,
    "SELECT order_id, user_id, price, vip, ts FROM orders": 1,
    **{q: None for q in JOINS},
    # Top-N and deduplication (the partition key is not a leading column)
    "SELECT * FROM (SELECT order_id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2": None,
    "SELECT order_id, user_id, amount FROM (SELECT order_id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2": None,
    "SELECT * FROM (SELECT order_id, amount, ROW_NUMBER() OVER (ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 3": None,
    "SELECT order_id, user_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn FROM orders) WHERE rn = 1": None,
    "SELECT order_id, user_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rn FROM orders) WHERE rn = 1": None,
    "SELECT order_id, price * 2 AS p2, CAST(amount AS DOUBLE) / 3 AS third, ts + INTERVAL '1' SECOND AS t1 FROM orders WHERE order_id < 5": 1,
}


def sql_text(tmp: Path, query: str, parallelism: int) -> str:
    tables = []
    for name, cols, text in (("orders", ORDERS_COLUMNS, ORDERS), ("users", USERS_COLUMNS, USERS)):
        (tmp / f"{name}.csv").write_text(text, encoding="utf-8")
        tables.append(f"CREATE TABLE {name} ({cols}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp / name}.csv', 'format' = 'csv', "
                      "'csv.header' = 'false', 'csv.null-literal' = '');")
    return f"SET 'parallelism' = '{parallelism}';\n" + "\n".join(tables) + f"\n{query};\n"


def printed(tmp: Path, query: str, parallelism: int, runner: Any = run_reference) -> list[str]:
    script = compile_sql(sql_text(tmp, query, parallelism), "q.sql")
    return list(runner(script.env.get_job_graph()).printed)


def per_key(lines: list[str], width: int) -> dict[Any, list[str]]:
    """Lines (without a subtask prefix) per key: the first ``width`` fields."""
    out: dict[Any, list[str]] = {}
    for line in lines:
        text = line.split("> ", 1)[1] if "> " in line.split("[", 1)[0] else line
        r = tuple(printed_rows([text])[0])
        out.setdefault(r[:width], []).append(text)
    return out


def test_the_fixtures_cover_what_flowc_runs() -> None:
    assert set(SUPPORTED) <= set(FLINK)
    assert all("error" not in FLINK[q] for q in SUPPORTED)
    assert len(SUPPORTED) >= 15


def final_table(lines: list[str]) -> list[str]:
    return sorted(map(repr, materialize(printed_rows([x.split("> ", 1)[-1] for x in lines]))))


@pytest.mark.parametrize("query", [q for q in SUPPORTED if q not in JOINS])
def test_changelog_matches_flink(tmp_path: Path, query: str) -> None:
    assert printed(tmp_path, query, 1) == FLINK[query]["print"]


@pytest.mark.parametrize("query", JOINS)
def test_join_result_matches_flink(tmp_path: Path, query: str) -> None:
    # the changelog of a join depends on how its two sources interleave (Flink read the
    # users first, flowc's reference executor the orders): the final table does not
    assert final_table(printed(tmp_path, query, 1)) == final_table(FLINK[query]["print"])


@pytest.mark.parametrize("query", list(SUPPORTED))
def test_changelog_per_key_at_parallelism_2(tmp_path: Path, query: str) -> None:
    lines = printed(tmp_path, query, 2)
    flink = FLINK[query]["print"]
    width = SUPPORTED[query]
    if width is not None:
        assert per_key(lines, width) == per_key(flink, width)
    assert final_table(lines) == final_table(flink)


@pytest.mark.parametrize("query", [q for q, c in FLINK.items() if "error" in c and "RANK" in q])
def test_rank_and_dense_rank_fail_as_in_flink(tmp_path: Path, query: str) -> None:
    from flowc.errors import FlowcError

    with pytest.raises(FlowcError) as info:
        printed(tmp_path, query, 1)
    assert info.value.message in FLINK[query]["error"]
