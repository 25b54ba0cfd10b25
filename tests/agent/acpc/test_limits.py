"""The bounds of agent.acpc.limits that every input format uses (docs/reference/limits.md)."""

from __future__ import annotations

import io

import pytest

from agent.acpc.errors import UsageError
from agent.acpc.limits import check_digits, check_json, excerpt, json_depth_over, read_lines


@pytest.mark.parametrize(
    ("text", "depth", "over"),
    [
        ("[" * 32 + "]" * 32, 32, None),
        ("[" * 33 + "]" * 33, 32, 32),
        ('{"a": "[[[\\"[[[", "b": [[1]]}', 3, None),  # brackets in strings do not count
        ('{"a": "[[[\\"[[[", "b": [[1]]}', 2, 24),
        ("[]" * 1000 + "[[[", 2, 2002),  # wide, then deep at the end
        ('[1, {"x": [2]}]', 3, None),
        ('[1, {"x": [2]}]', 2, 10),
        ("[[[}}}", 2, 2),  # not JSON: the scan still answers
    ],
)
def test_json_depth_over(text: str, depth: int, over: int | None) -> None:
    assert json_depth_over(text, depth) == over


def test_check_json_and_excerpt() -> None:
    with pytest.raises(UsageError, match=r"^f\.json: expected a spec nested at most 32 "
                       r"levels deep, got deeper at character 32: '\[\[\[.*\(100 characters\)$"):
        check_json("[" * 100, where="f.json", what="a spec", max_chars=1000, error=UsageError)
    with pytest.raises(UsageError, match=r"of at most 10 characters, got 11"):
        check_json("[" * 11, where="f", what="a spec", max_chars=10, error=UsageError)
    assert excerpt("abc") == "'abc'"
    assert excerpt("x" * 100) == repr("x" * 80) + "... (100 characters)"
    assert excerpt(b"\xff" * 100, 2) == "b'\\xff\\xff'... (100 bytes)"
    assert excerpt([1] * 100, 10) == "[1, 1, 1, ... (300 characters)"


def test_check_digits() -> None:
    assert check_digits("-" + "0" * 19 + "7", 20, where="w", field="f", error=UsageError) == -7
    with pytest.raises(UsageError, match=r"^w: expected f of at most 20 digits, got '1111"):
        check_digits("1" * 5000, 20, where="w", field="f", error=UsageError)


def test_read_lines_bounds_each_line_and_names_it() -> None:
    def lines(data: bytes, limit: int = 8) -> list[tuple[int, str]]:
        return list(read_lines(io.BytesIO(data), source="s", what="a file", error=UsageError,
                               max_line_bytes=limit))

    assert lines(b"ab\n12345678\nlast") == [(1, "ab"), (2, "12345678"), (3, "last")]
    assert lines(b"") == []
    with pytest.raises(UsageError, match=r"^s:2: expected a file with lines of at most 8 "
                       r"bytes, got a longer line: b'123456789'$"):
        lines(b"ab\n123456789\n")
    with pytest.raises(UsageError, match=r"^s:2: expected a file \(UTF-8\), got byte 0xff at "
                       r"column 2$"):
        lines(b"ab\nc\xff\n")
