"""Reading a script file: UTF-8 text, or a positioned error that says what the file is.

``.flow`` and ``.sql`` files are UTF-8. A file that is not (a binary file, Latin-1 text, a
UTF-16 file saved by a Windows editor) is reported at the first byte that does not decode,
with the line shown as far as it can be read, never with Python's codec wording.
"""

from __future__ import annotations

import codecs

from flowc.errors import ConfigError, FlowSyntaxError, Span

# Longest first: a UTF-32 little-endian mark starts with the UTF-16 one.
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32", "utf-32"), (codecs.BOM_UTF32_BE, "UTF-32", "utf-32"),
         (codecs.BOM_UTF16_LE, "UTF-16", "utf-16"), (codecs.BOM_UTF16_BE, "UTF-16", "utf-16"))
_CONVERT = "save it as UTF-8 in your editor, or convert it with iconv -f {enc} -t UTF-8 {path}"


def read_script(path: str) -> str:
    """The text of a script file; ConfigError if it cannot be read, FlowSyntaxError (at
    the offending byte) if it is not UTF-8 text."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        reason = (e.strerror or str(e)).lower()
        raise ConfigError(f"cannot read {path}: {reason}") from None
    return decode_script(data, path)


def decode_script(data: bytes, path: str) -> str:
    """``data`` as UTF-8 (a UTF-8 byte order mark is kept: the lexer skips it)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _not_utf8(data, path, e) from None


def _not_utf8(data: bytes, path: str, e: UnicodeDecodeError) -> FlowSyntaxError:
    for bom, name, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                text = ""
            return FlowSyntaxError(
                f"this file is {name} text (it starts with a {name} byte order mark); "
                "scripts must be UTF-8", Span(path, 1, 1, 1, 2, text or None),
                hint=_CONVERT.format(enc=name, path=path))
    bad = data[e.start]
    line_start = data.rfind(b"\n", 0, e.start) + 1
    line = data.count(b"\n", 0, e.start) + 1
    # Columns count characters, as everywhere else: decode the line up to the byte.
    before = data[line_start:e.start].decode("utf-8", errors="replace")
    if line == 1:
        before = before.removeprefix("\ufeff")
    column = len(before) + 1
    text = data.decode("utf-8", errors="replace")
    if b"\0" in data[:8192]:
        # NUL bytes do not occur in text files (git and grep use the same test).
        message = f"this file is not UTF-8 text (byte 0x{bad:02x}); it looks like a binary file"
        hint = "flowc reads .flow scripts and .sql files, which are text"
    else:
        message = f"this file is not UTF-8 text (byte 0x{bad:02x} {_reason(e)})"
        hint = "if it is Latin-1 text, " + _CONVERT.format(enc="latin1", path=path)
    return FlowSyntaxError(message, Span(path, line, column, line, column + 1, text), hint=hint)


def _reason(e: UnicodeDecodeError) -> str:
    if e.reason == "invalid start byte":
        return "cannot start a character"
    if e.reason == "unexpected end of data":
        return "starts a character that the file ends in the middle of"
    return "starts a character that is not complete"
