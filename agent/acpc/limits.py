"""Bounds every input is checked against before work that grows with it (docs/reference/limits.md).

Pure and stdlib only: :func:`excerpt` for error messages that quote long input,
:func:`check_json` (size and nesting depth of JSON text, scanned before ``json.loads`` so a
hostile document costs a linear scan, never a deep recursion) and :func:`check_digits` (a
decimal number's length, before ``int()`` so the interpreter's integer conversion limit is
never what stops it), :func:`read_text_file` (a whole-file input, its size bounded before
it is read), :func:`read_lines` (a line-oriented file streamed with a bound per line; it
reads only the stream its caller opened). Each raises the error class its caller
passes, so the message names the caller's file and field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import BinaryIO

from agent.acpc.errors import AcpcError

EXCERPT_CHARS = 80
"""At most this many characters of bad input are quoted in an error message."""

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in any JSON input (the deepest real one,
a betting spec under ``"betting"`` with per-player tables, has 6 levels)."""


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr`` of ``value`` for an error message, cut to about ``limit`` characters with
    the length of what was cut: a string or bytes is cut before quoting (so its ``repr`` is
    still a valid literal), anything else is cut after."""
    if isinstance(value, str | bytes):
        if len(value) <= limit:
            return repr(value)
        unit = "bytes" if isinstance(value, bytes) else "characters"
        return f"{value[:limit]!r}... ({len(value):,} {unit})"
    try:
        text = repr(value)
    except ValueError:  # an int over the interpreter's 4,300-digit conversion limit
        return f"an integer of {value.bit_length() if isinstance(value, int) else '?'} bits"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


_JSON_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_JSON_TOKEN = re.compile(_JSON_STRING + r"|[\[\]{}]")
"""A JSON string (skipped whole, escapes honoured) or a bracket."""
_STRINGS_AND_OTHERS = re.compile(_JSON_STRING + r'|[^\[\]{}"]+')
_INNERMOST = re.compile(r"\[\]|\{\}")


def json_depth_over(text: str, max_depth: int) -> int | None:
    """The offset where ``text`` first nests arrays/objects deeper than ``max_depth``, or
    ``None``. Brackets inside strings do not count. The text need not be valid JSON (the
    parser that runs next says what else is wrong).

    Fast whatever the shape: the brackets outside strings are kept and innermost pairs
    removed ``max_depth`` times (each pass at the regular expression engine's speed); only
    if brackets remain does a scan find the offset, stopping there."""
    brackets = _STRINGS_AND_OTHERS.sub("", text)
    for _ in range(max_depth):
        if not brackets:
            return None
        reduced = _INNERMOST.sub("", brackets)
        if reduced == brackets:
            break
        brackets = reduced
    if not brackets:
        return None
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        ch = m.group()
        if ch == "[" or ch == "{":
            depth += 1
            if depth > max_depth:
                return m.start()
        elif ch == "]" or ch == "}":
            depth -= 1
    return None


def check_json(text: str, *, where: str, what: str, max_chars: int,
               error: type[AcpcError], max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise ``error`` unless ``text`` has at most ``max_chars`` characters and nests at
    most ``max_depth`` levels (call before ``json.loads``).

    ``where`` names the input (a file, or "inline"), ``what`` what was expected.
    """
    if len(text) > max_chars:
        raise error(f"{where}: expected {what} of at most {max_chars:,} characters, got "
                    f"{len(text):,}: {excerpt(text, 40)}")
    offset = json_depth_over(text, max_depth)
    if offset is not None:
        raise error(f"{where}: expected {what} nested at most {max_depth} levels deep, got "
                    f"deeper at character {offset:,}: {excerpt(text, 40)}")


def read_text_file(path: str | os.PathLike[str], *, max_bytes: int, what: str,
                   decoded: str, error: type[AcpcError], where: str | None = None,
                   encoding: str = "utf-8") -> str:
    """The text of a whole-file input (a game definition, a JSON spec or policy, a TOML
    file): at most ``max_bytes`` bytes are read (one more tells a longer file), then
    decoded as ``encoding``.

    Raises:
        error: one line naming ``where`` (default: the path) if the file cannot be opened
            (``could not open WHAT 'path': reason``), is longer (``expected a WHAT of at
            most N bytes``), or does not decode (``expected DECODED, got byte 0x..``).
    """
    name = str(path) if where is None else where
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"could not open {what} {excerpt(name)}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise error(f"{name}: expected a {what} of at most {max_bytes:,} bytes, got more")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{name}: expected {decoded}, got byte {data[exc.start]:#04x} at offset "
                    f"{exc.start}") from None


def check_digits(digits: str, max_digits: int, *, where: str, field: str,
                 error: type[AcpcError]) -> int:
    """``int(digits)`` once its length (sign excluded) is at most ``max_digits``, else
    ``error`` naming ``where`` and ``field``."""
    if len(digits.lstrip("+-")) > max_digits:
        raise error(f"{where}: expected {field} of at most {max_digits} digits, got "
                    f"{excerpt(digits, 20)}")
    return int(digits)


MAX_RECORD_LINE_BYTES = 1 << 20
"""Longest line of a line-oriented input read here (agent traces, dealer logs and
transaction files): 1 MiB; real ones are under 4 KB (the reference dealer's lines are at
most 4,095 bytes)."""


def read_lines(stream: BinaryIO, *, source: str, what: str, error: type[AcpcError],
               max_line_bytes: int = MAX_RECORD_LINE_BYTES,
               encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """``(line number, line without its final ``\\n``)`` of a binary stream, one at a time (the
    file is streamed, never read whole), each line at most ``max_line_bytes`` bytes.

    Raises:
        error: naming ``source`` and the line for a line too long or not in ``encoding``
            (``what`` says what the file was expected to be).
    """
    number = 0
    while True:
        raw = stream.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            raise error(f"{source}:{number}: expected {what} with lines of at most "
                        f"{max_line_bytes:,} bytes, got a longer line: {excerpt(raw, 40)}")
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise error(f"{source}:{number}: expected {what} ({encoding.upper()}), got byte "
                        f"{raw[exc.start]:#04x} at column {exc.start + 1}") from None
        yield number, text[:-1] if text.endswith("\n") else text
