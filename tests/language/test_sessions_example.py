"""examples/sessions.flow: a session-window example whose data has late records, and they
reach the ``late_clicks`` side stream (not a session)."""

from __future__ import annotations

import csv
import importlib.util
import shutil
from pathlib import Path

from flowc.executor import run_reference
from flowc.parser import compile_file
from printed import rows as printed_rows

EXAMPLES = Path(__file__).parents[2] / "examples"
# The offline phones' clicks in data/sessions.csv (make_sessions.OFFLINE): uploaded minutes
# after they happened, long after their sessions closed.
T0 = 1714557600000  # 2024-05-01 10:00:00 UTC
LATE = {("user_3", T0 + 20_000), ("user_3", T0 + 22_600), ("user_3", T0 + 24_186),
        ("user_6", T0 + 200_000), ("user_6", T0 + 200_779),
        ("user_1", T0 + 90_000), ("user_1", T0 + 90_904), ("user_1", T0 + 91_842),
        ("user_1", T0 + 94_431)}


def test_data_file_is_what_the_generator_writes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_sessions",
                                                  EXAMPLES / "data" / "make_sessions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(str(tmp_path))
    assert (tmp_path / "sessions.csv").read_bytes() == \
        (EXAMPLES / "data" / "sessions.csv").read_bytes()


def test_late_records_go_to_the_side_stream(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    script = compile_file(str(tmp_path / "examples" / "sessions.flow"))
    result = run_reference(script.env.get_job_graph())
    late_rows: list[dict[str, str]] = []
    for part in sorted((tmp_path / "examples" / "out" / "late_clicks.csv").glob("part-*")):
        with open(part, encoding="utf-8", newline="") as fh:
            late_rows.extend(csv.DictReader(fh))
    assert {(r["user_id"], int(r["ts"])) for r in late_rows} == LATE
    assert len(late_rows) == len(LATE) and all(r["why"] == "late" for r in late_rows)
    sessions = printed_rows(result.printed)
    assert len(sessions) == 57
    # Every other record is counted in exactly one session.
    with open(EXAMPLES / "data" / "sessions.csv", encoding="utf-8", newline="") as fh:
        with_user = sum(1 for r in csv.DictReader(fh) if r["user_id"])
    assert sum(s[3] for s in sessions) == with_user - len(LATE)
