"""A computed time attribute (``rt AS TO_TIMESTAMP_LTZ(ts, 3)``) on the streaming executor's
micro-batches, without Spark (test_sql_watermarks_streaming.py's driver and files): the
row and the columnar path give, batch by batch, the sinks and late counts of the same
table with a declared TIMESTAMP(3) time attribute (the files hold epoch milliseconds)."""

from __future__ import annotations

from pathlib import Path

from test_sql_watermarks_streaming import SQL

from streaming.columnar_paths import SqlDriver

COMPUTED = SQL.replace("{setting}", "").replace(
    "score DOUBLE, ts TIMESTAMP(3),\n  WATERMARK FOR ts AS ts -",
    "score DOUBLE, ts BIGINT, rt AS TO_TIMESTAMP_LTZ(ts, 3),\n  WATERMARK FOR rt AS rt -").replace(
    "DESCRIPTOR(ts)", "DESCRIPTOR(rt)")


def test_a_computed_time_attribute_on_both_streaming_paths(tmp_path: Path) -> None:
    assert COMPUTED != SQL.replace("{setting}", "") and "DESCRIPTOR(rt)" in COMPUTED
    (tmp_path / "plain").mkdir()
    (tmp_path / "computed").mkdir()
    plain = SqlDriver(SQL.replace("{setting}", ""), tmp_path / "plain").run(
        "row", 6, lambda b: False)
    d = SqlDriver(COMPUTED, tmp_path / "computed")
    row = d.run("row", 6, lambda b: False)
    col = d.run("col", 6, lambda b: True)
    for b, (p, r, c) in enumerate(zip(plain, row, col)):
        # the sinks' node ids differ (the computed version has two operators more)
        assert list(r["sinks"].values()) == list(p["sinks"].values()), b
        assert c["sinks"] == r["sinks"], b
        late = [sum(s["late"] for s in x["stats"].values()) for x in (p, r, c)]
        assert late[0] == late[1] == late[2], (b, late)
    assert any(r["sinks"] for r in row[:-1])  # windows fired before the last batch
    assert sum(s["late"] for r in row for s in r["stats"].values()) > 0
