"""The native csv reader of the columnar executor gives exactly the row reader's records,
bad rows (file, line, text, error) and dead letters, on random files and splits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.errors import ExecutionError
from flowc.executor.arrow import csvsource
from flowc.executor.runtime import files
from flowc.operators import FileSource

from .native_readers import SCHEMA, assert_native_equals_row_reader, native

fields = {
    "s": st.sampled_from(["a", "", "x y", " lead", "ü", "NULL", '"q"', "a\"b"]),
    "i": st.sampled_from(["1", "-42", "+7", "", "9223372036854775807", "99999999999999999999",
                          "x", " 3 ", "1.0", "NULL"]),
    "d": st.sampled_from(["0.5", "-1e3", "", "inf", "nan", ".5", "5.", "1_0", "x", "NULL"]),
    "b": st.sampled_from(["true", "false", "TRUE", " true", "", "yes", "NULL"]),
    "t": st.sampled_from(["2024-05-01T10:00:00Z", "2024-05-01 10:00:00.5",
                          "2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z", "1714557600000",
                          "2024-05-01", "2024-05-01T10:00:00+02:00", "", "bad", "NULL",
                          "2024-05-01T10:00:60Z"]),
}
lines = st.one_of(
    st.tuples(*fields.values()).map(lambda t: ",".join(t)),
    st.sampled_from(["", "only,three,fields", "\ta,1,2,true,1", "x,1,2,true,1\r",
                     "a,1,0.5,true,2024-05-01T10:00:00Z,extra", "\x00,1,1,true,1",
                     'a,"1",0.5,true,1']),
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=st.lists(lines, max_size=40), header=st.booleans(), dead=st.booleans(),
       null_value=st.sampled_from(["", "NULL"]), p=st.integers(1, 3),
       small=st.booleans(), bad_utf8=st.booleans())
def test_native_reader_equals_row_reader(tmp_path_factory: Any, body: list[str], header: bool,
                                         dead: bool, null_value: str, p: int, small: bool,
                                         bad_utf8: bool) -> None:
    where: Path = tmp_path_factory.mktemp("csv")
    data = ("s,i,d,b,t\n" if header else "") + "\n".join(body) + ("\n" if body else "")
    raw = data.encode()
    if bad_utf8 and body:
        raw = raw.replace(b"a", b"\xff", 1)
    path = where / "in.csv"
    path.write_bytes(raw)
    options = (("header", "true" if header else "false"), ("null_value", null_value))
    spec = FileSource(str(path), "csv", SCHEMA.as_pairs(), options,
                      dead_letter=str(where / "dead") if dead else None)
    assert_native_equals_row_reader(csvsource.read_split, spec, p, small)


def _read(spec: FileSource, split: files.Split, bad: files.BadRows) -> Any:
    return native(csvsource.read_split, spec, split, bad)


def test_common_blocks_take_the_native_path(tmp_path: Path, monkeypatch: Any) -> None:
    """A clean file never reaches the row reader (the fast path is really taken)."""
    path = tmp_path / "c.csv"
    path.write_text("s,i,d,b,t\n" + "".join(f"u{n},{n},{n / 4},true,2024-05-01T10:00:0{n % 10}Z\n"
                                            for n in range(1000)))
    spec = FileSource(str(path), "csv", SCHEMA.as_pairs(), (("header", "true"),))

    def boom(*_: Any, **__: Any) -> Any:
        raise AssertionError("the row reader was used")
    monkeypatch.setattr(files, "_read_text", boom)
    split = files.plan_splits("csv", files.list_files(str(path)), 1)[0]
    rows = [r for c in _read(spec, split, files.BadRows(spec))
            for r in c.rows()]
    assert len(rows) == 1000
    assert rows[3] == ("u3", 3, 0.75, True, 1714557603000)


@pytest.mark.parametrize("value", ["2023-02-29T00:00:00Z", "2024-05-01T10:61:00Z"])
def test_impossible_timestamps_are_the_row_readers_bad_rows(tmp_path: Path, value: str) -> None:
    path = tmp_path / "c.csv"
    path.write_text(f"a,1,1.0,true,{value}\n")
    spec = FileSource(str(path), "csv", SCHEMA.as_pairs(), ())
    split = files.plan_splits("csv", files.list_files(str(path)), 1)[0]
    with pytest.raises(ExecutionError, match="line 1"):
        list(_read(spec, split, files.BadRows(spec)))
