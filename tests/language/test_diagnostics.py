"""Diagnostics that help: did-you-mean for misspelt words, no follow-on errors, UDF arity."""

from __future__ import annotations

from pathlib import Path

import pytest

from flowc.errors import FlowcError, MultipleErrors, PlanError
from flowc.parser import compile_file, compile_source, parse_source

SOURCE = "source clicks (user_id string, article_id string, ts timestamp) values " \
         "('u', 'a', timestamp '2024-05-01') watermark ts;\n"


def errors_of(text: str, base_dir: str | None = None) -> list[FlowcError]:
    with pytest.raises(FlowcError) as info:
        compile_source(SOURCE + text, "d.flow", base_dir=base_dir)
    err = info.value
    return list(err.errors) if isinstance(err, MultipleErrors) else [err]


@pytest.mark.parametrize("text,message,hint", [
    ("clicks | fliter user_id is null | print;", "unknown pipeline step 'fliter'",
     "did you mean 'filter'?"),
    ("clicks | key by user_id | agregate count(*) as n | print;",
     "unknown pipeline step 'agregate'", "did you mean 'aggregate'?"),
    ("clicks | key by user_id | windw tumbling 5s | aggregate count(*) as n | print;",
     "unknown pipeline step 'windw'", "did you mean 'window'?"),
    ("clicks | prnt;", "unknown pipeline step 'prnt'", "did you mean 'print'?"),
    # A keyword glued to a word was silently split (`mapuser_id` read as `map user_id`).
    ("clicks | mapp user_id | print;", "unknown pipeline step 'mapp'", "did you mean 'map'?"),
    ("clicks | mapuser_id | print;", "unknown pipeline step 'mapuser_id'",
     "write 'map user_id' if a space is missing"),
    ("clicks | map user_id asx | print;", "unexpected 'asx'", "did you mean 'as'?"),
    ("clicks | map user_id asuid | print;", "unexpected 'asuid'",
     "write 'as uid' if a space is missing"),
    ("clicks | key byuser_id | print;", "unexpected 'byuser_id'",
     "write 'by user_id' if a space is missing"),
    ("sorce s (a int) values (1);", "unknown statement 'sorce'", "did you mean 'source'?"),
    ("clicks | key by user_id | aggregate cnt(*) as n | print;",
     "unknown aggregate function 'cnt'", "did you mean 'count'?"),
    ("clicks | key by user_id | aggregate summ(1) as n | print;",
     "unknown aggregate function 'summ'", "did you mean 'sum'?"),
])
def test_did_you_mean(text: str, message: str, hint: str) -> None:
    errors = errors_of(text)
    assert [(e.message, e.hint) for e in errors] == [(message, hint)]
    assert errors[0].span is not None and errors[0].span.line == 2


def test_label_without_a_note_repeating_it() -> None:
    err = errors_of("clicks | | print;")[0]
    assert err.message.startswith("a pipeline step starts after '|': map, select")
    assert err.notes == ()


def test_misspelt_source_causes_no_unknown_stream_errors() -> None:
    errors = errors_of("sorce views (a int) values (1);\nviews | print;")
    assert [e.message for e in errors] == ["unknown statement 'sorce'"]


def test_keywords_inside_names_are_fine() -> None:
    parse_source("source s (null_value string, mapping int, by_user int, asx int) "
                 "from csv 'x' options (null_value = 'NA');\n"
                 "s | map mapping, by_user, asx, null_value | print;")


def test_window_note_only_when_the_window_is_elsewhere() -> None:
    one_line = errors_of("clicks | key by user_id | window tumbling 5s | print;")[0]
    assert one_line.notes == ()
    two_lines = errors_of("clicks | key by user_id | window tumbling 5s\n  | print;")[0]
    assert two_lines.notes == ("the window is at line 2",)


def test_failed_import_causes_no_unknown_function_errors(tmp_path: Path) -> None:
    errors = errors_of("import udf no_such_module_d1.score(string) -> double;\n"
                       "clicks | map score(user_id) as s | print;\n"
                       "clicks | key by user_id | aggregate score(user_id) | print;\n"
                       "source g (x double) datagen rows 3 (x = score('a'));\n"
                       "clicks | map scor(user_id) as s | print;", str(tmp_path))
    assert [e.message.split(":")[0] for e in errors] == [
        "cannot import module 'no_such_module_d1'",
        "each 'aggregate' item must be an aggregate function",
        "unknown function 'scor'"]


def test_udf_declared_parameters_must_fit_the_function(tmp_path: Path) -> None:
    (tmp_path / "arity_udfs_d1.py").write_text(
        "def two(a, b):\n    return 1.0\n"
        "def flexible(a, *rest):\n    return 1.0\n"
        "def defaults(a, b=1):\n    return 1.0\n", encoding="utf-8")
    errors = errors_of("import udf arity_udfs_d1.two(string) -> double;\n"
                       "import udf arity_udfs_d1.flexible(string, int, int) -> double;\n"
                       "import udf arity_udfs_d1.defaults(string) -> double;\n"
                       "import udf arity_udfs_d1.defaults(string, int, int) -> double as d3;\n"
                       "clicks | map two(user_id) as s | print;", str(tmp_path))
    assert [(e.message, e.span.line if e.span else None) for e in errors] == [
        ("the import declares 1 parameter, but two(a, b) cannot be called with 1 argument: "
         "missing a required argument: 'b'", 2),
        ("the import declares 3 parameters, but defaults(a, b=1) cannot be called with 3 "
         "arguments: too many positional arguments", 5)]
    assert errors[0].span is not None and errors[0].span.column == 12


def test_utf8_byte_order_mark_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "bom.flow"
    path.write_bytes(b"\xef\xbb\xbfsource s (x int) values (1) | print;\n")
    with pytest.raises(FlowcError) as info:
        compile_file(str(path))
    # Only the real mistake, at the column an editor shows (the mark takes none).
    assert info.value.message.startswith("expected")
    assert info.value.span is not None and info.value.span.column == 29
    path.write_bytes(b"\xef\xbb\xbfsource s (x int) values (1);\ns | print;\n")
    assert compile_file(str(path)).sinks


@pytest.mark.parametrize("text,line,hint", [
    ("", 1, "the script is empty"), ("-- nothing yet\n\n", 1, "the script is empty"),
    ("source s (x int) values (1);\n\nlet t = s | map x;\n", 3, "end a pipeline in a sink"),
])
def test_script_without_sink_is_a_positioned_error(tmp_path: Path, text: str, line: int,
                                                    hint: str) -> None:
    path = tmp_path / "nothing.flow"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PlanError) as info:
        compile_file(str(path))
    err = info.value
    assert err.message == "No operators defined in streaming topology. Cannot execute."
    assert err.java_class == "IllegalStateException"
    assert err.span is not None and (err.span.file, err.span.line) == (str(path), line)
    assert err.hint is not None and err.hint.startswith(hint)


def _caret_cells(formatted: str) -> tuple[str, str]:
    """The shown source line and the caret line, without the gutter."""
    lines = formatted.splitlines()
    return lines[1].split(" | ", 1)[1], lines[2].split("| ", 1)[1]


@pytest.mark.parametrize("before", ["'日本語'", "'ｆｕｌｌ'", "'e\u0301e\u0301'", "'\t'"])
def test_caret_is_placed_by_display_width(before: str) -> None:
    err = errors_of(f"clicks | map {before} as x, bad | print;")[0]
    shown, carets = _caret_cells(err.format())
    # A terminal shows wide characters in two cells and combining accents in none: the
    # caret must sit under 'bad' in cells, not in characters.
    prefix = shown[:shown.index("bad")]
    cells = sum(2 if ch in "日本語ｆｕｌｌ" else 0 if ch == "\u0301" else 1 for ch in prefix)
    assert carets == " " * cells + "^^^"


def test_control_characters_and_form_feeds_in_excerpts() -> None:
    # A form feed is whitespace to the lexer, not a line break: the error is on line 3 and
    # that line is shown; a stray escape byte is shown as U+FFFD, not sent to the terminal.
    err = errors_of("clicks |\x0c map user_id\n  | map \x1b | print;")[0]
    assert err.span is not None and err.span.line == 3
    shown, carets = _caret_cells(err.format())
    assert shown == "  | map \ufffd | print;"
    assert carets == " " * 8 + "^"


def _read_error(tmp_path: Path, data: bytes) -> FlowcError:
    path = tmp_path / "e.flow"
    path.write_bytes(data)
    with pytest.raises(FlowcError) as info:
        compile_file(str(path))
    return info.value


def test_binary_file_is_a_positioned_error(tmp_path: Path) -> None:
    err = _read_error(tmp_path, b"s\x97\x00\x01\x1b[2J\nmore")
    assert err.message == ("this file is not UTF-8 text (byte 0x97); it looks like a binary "
                           "file")
    assert err.span is not None and (err.span.line, err.span.column) == (1, 2)
    text = err.format()
    assert "codec" not in text and "utf-8'" not in text
    # The line is shown decoded with replacements, and no raw control byte reaches the output.
    assert text.splitlines()[1:3] == ["   1 | s\ufffd\ufffd\ufffd\ufffd[2J", "     |  ^"]


def test_latin1_file_points_at_the_bad_byte(tmp_path: Path) -> None:
    err = _read_error(tmp_path, "source s (a string) values (1);\n-- 日本 café\n".encode()
                      .replace("é".encode(), b"\xe9"))
    assert err.message == ("this file is not UTF-8 text (byte 0xe9 starts a character that is "
                           "not complete)")
    assert err.span is not None and (err.span.line, err.span.column) == (2, 10)
    # Nine characters, eleven cells before the bad byte.
    assert err.format().splitlines()[2] == "     | " + " " * 11 + "^"
    assert err.hint is not None and "iconv -f latin1 -t UTF-8" in err.hint


@pytest.mark.parametrize("encoding,name", [("utf-16", "UTF-16"), ("utf-32", "UTF-32")])
def test_utf16_file_is_named(tmp_path: Path, encoding: str, name: str) -> None:
    err = _read_error(tmp_path, "source s (a int) values (1);\ns | print;\n".encode(encoding))
    assert err.message == (f"this file is {name} text (it starts with a {name} byte order "
                           "mark); scripts must be UTF-8")
    assert err.format().splitlines()[1] == "   1 | source s (a int) values (1);"
    assert err.hint is not None and f"iconv -f {name} -t UTF-8" in err.hint


def test_unreadable_path_is_plain_words(tmp_path: Path) -> None:
    with pytest.raises(FlowcError) as info:
        compile_file(str(tmp_path))
    assert info.value.message == f"cannot read {tmp_path}: is a directory"


def test_every_syntax_label_has_a_golden_case() -> None:
    from flowc.parser.syntax import _EXAMPLES

    goldens = "".join(p.read_text(encoding="utf-8")
                      for p in (Path(__file__).parent / "errors").glob("*.expected"))
    assert [label for label in _EXAMPLES if f"error: {label}" not in goldens] == []


@pytest.mark.parametrize("steps", ["key by user_id | window 5s", "key by user_id, ts | window 5s",
                                   "window 5s", "join clicks as c on user_id window 5s"])
def test_window_kind_label_wherever_a_window_goes(steps: str) -> None:
    err = errors_of(f"clicks | {steps} | aggregate count(*) as n | print;")[0]
    assert err.message == ("a window is 'tumbling SIZE', 'sliding SIZE every SLIDE', "
                           "'session gap GAP' or 'cumulating SIZE every STEP'")
    assert err.hint == "for example: window tumbling 5s"


@pytest.mark.parametrize("code,message", [
    ("import not_installed_dep_q\ndef f(x):\n    return 1.0\n",
     "it imports 'not_installed_dep_q', which is not installed"),
    ("def f(x)\n    return 1.0\n", "{m}.py:1 is not valid Python (expected ':')"),
    ("X = 1\nY = X // 0\n",
     "running it failed at {m}.py:2: integer division or modulo by zero (ZeroDivisionError)"),
])
def test_import_failures_in_plain_words(tmp_path: Path, code: str, message: str,
                                        request: pytest.FixtureRequest) -> None:
    # A module name of its own per case: Python caches modules that imported.
    module = "udf_fail_" + str(abs(hash(request.node.name)))
    (tmp_path / f"{module}.py").write_text(code, encoding="utf-8")
    errors = errors_of(f"import udf {module}.f(string) -> double;\nclicks | print;",
                       base_dir=str(tmp_path))
    assert [e.message for e in errors] == [
        f"cannot import module '{module}': " + message.format(m=module)]


def test_long_lines_are_shown_around_the_span() -> None:
    # A 1000-term line is shown as a window around the mistake, the caret still under it.
    err = errors_of("clicks | map " + "user_id || " * 500 + "bad" + " || user_id" * 500
                    + " as x | print;")[0]
    assert err.message == "unknown field 'bad' in 'map'"
    shown, carets = _caret_cells(err.format())
    assert shown.startswith("...") and shown.endswith("...") and " || bad || " in shown
    assert len(shown) < 120
    assert shown[len(carets) - 3:len(carets)] == "bad" and carets.endswith(" ^^^")
