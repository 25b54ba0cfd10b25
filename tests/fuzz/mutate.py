"""Mutations: bytes, text lines, and values inside JSON / msgpack documents.

Every function takes a :class:`random.Random` and returns ``(name, mutated)``; the name
says what was done (``"value:huge-int@cards.buckets[1]"``) and is what failures are grouped
by. Nothing here knows a file format; :mod:`tests.fuzz.formats` picks the mutations.

Values that the encoders cannot write themselves (a 5,000-digit integer in JSON, nesting
deeper than msgpack's packer allows) are written as a sentinel string and spliced into the
encoded bytes afterwards (:func:`encode_json`, :func:`encode_msgpack`).
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

import msgpack

DEEP = 3000
"""Nesting depth of the deep-nesting mutation (arrays in arrays)."""
LONG = 100_000
"""Characters of the long-string / long-line mutations."""
DIGITS = 5000
"""Digits of the huge-number mutation in text formats (above Python's 4,300-digit
integer-conversion limit)."""

_DEEP_TOKEN = "\x00fuzz-deep\x00"
_BIG_TOKEN = "\x00fuzz-big\x00"


# --------------------------------------------------------------------------- bytes


def mutate_bytes(rng: random.Random, data: bytes, *, start: int = 0) -> tuple[str, bytes]:
    """One byte-level mutation at or after ``start`` (a table's offset, say)."""
    buf = bytearray(data)
    n = len(buf)
    lo = min(start, n)
    op = rng.choice(["flip", "set", "insert", "delete", "duplicate", "truncate", "append",
                     "append-big", "int"])
    pos = rng.randrange(lo, n) if n > lo else lo
    if op == "flip":
        for _ in range(rng.randint(1, 8)):
            if n > lo:
                p = rng.randrange(lo, n)
                buf[p] ^= 1 << rng.randrange(8)
    elif op == "set":
        if n > lo:
            buf[pos] = rng.choice([0x00, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    elif op == "insert":
        buf[pos:pos] = rng.randbytes(rng.randint(1, 64))
    elif op == "delete":
        del buf[pos:pos + rng.randint(1, 64)]
    elif op == "duplicate":
        span = buf[pos:pos + rng.randint(1, 256)]
        buf[pos:pos] = span * rng.choice([1, 2, 100])
    elif op == "truncate":
        del buf[pos:]
    elif op == "append":
        buf += rng.randbytes(rng.randint(1, 64))
    elif op == "append-big":
        buf += b"\0" * rng.choice([4096, 1 << 20])
    else:  # an interesting little-endian integer written over 4 or 8 bytes
        width = rng.choice([4, 8])
        value = rng.choice([0, 1, 2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1])
        buf[pos:pos + width] = (value % 2 ** (8 * width)).to_bytes(width, "little")
    return f"bytes:{op}", bytes(buf)


# --------------------------------------------------------------------------- text

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_TEXT_NUMBERS = ["0", "-1", "-0", "1", "2147483648", "4294967296", "9223372036854775808",
                 "1e300", "inf", "nan", "0.5", "007"]


def huge_number(rng: random.Random) -> str:
    return rng.choice(["9", "1"]) + "0" * (DIGITS - 1)


def mutate_text(rng: random.Random, text: str) -> tuple[str, str]:
    """One line-level mutation of a text file."""
    lines = text.split("\n")
    n = len(lines)
    i = rng.randrange(n)
    op = rng.choice(["number", "number", "huge-number", "delete-line", "duplicate-line",
                     "repeat-line", "swap-lines", "long-line", "garbage-line", "truncate",
                     "empty", "crlf", "non-ascii", "nul", "long-count"])
    if op in ("number", "huge-number"):
        spots = [(j, m) for j, line in enumerate(lines) for m in _NUMBER.finditer(line)]
        if spots:
            j, m = rng.choice(spots)
            new = huge_number(rng) if op == "huge-number" else rng.choice(_TEXT_NUMBERS)
            lines[j] = lines[j][:m.start()] + new + lines[j][m.end():]
    elif op == "delete-line":
        del lines[i]
    elif op == "duplicate-line":
        lines.insert(i, lines[i])
    elif op == "repeat-line":
        lines[i:i + 1] = [lines[i]] * rng.choice([100, 1000])
    elif op == "swap-lines":
        j = rng.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "long-line":
        lines.insert(i, rng.choice(["x", "9", "[", "{", "=", " "]) * LONG)
    elif op == "garbage-line":
        lines.insert(i, rng.choice(["= 1", "stack =", "numPlayers = 2 2", "\t", "#", ":::",
                                    "STATE:", "STATE:0:::", "{}", "[]", "null", "GAMEDEF",
                                    "END GAMEDEF", "SCORE:", "\x1b[2J"]))
    elif op == "truncate":
        cut = rng.randrange(len(text) + 1)
        return f"text:{op}", text[:cut]
    elif op == "empty":
        return f"text:{op}", ""
    elif op == "crlf":
        return f"text:{op}", text.replace("\n", "\r\n")
    elif op == "non-ascii":
        line = lines[i]
        p = rng.randrange(len(line) + 1)
        lines[i] = line[:p] + rng.choice(["é", "\u202e", "\udcff", "\ufeff", "🂡"]) + line[p:]
    elif op == "nul":
        line = lines[i]
        p = rng.randrange(len(line) + 1)
        lines[i] = line[:p] + "\0" + line[p:]
    else:  # a list of numbers made very long: "stack = 1 1 1 ... (10,000 times)"
        numbered = [(j, found) for j, line in enumerate(lines)
                    if (found := _NUMBER.search(line)) is not None]
        if numbered:
            j, first = rng.choice(numbered)
            end = first.end()
            lines[j] = lines[j][:end] + (" " + first.group()) * 10_000 + lines[j][end:]
    return f"text:{op}", "\n".join(lines)


# --------------------------------------------------------------------------- values


def _paths(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            found += _paths(v, (*path, k))
    elif isinstance(obj, list):
        for k, v in enumerate(obj):
            found += _paths(v, (*path, k))
    return found


def path_text(path: tuple[Any, ...]) -> str:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out or "<root>"


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        obj = obj[k]
    return obj


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(obj, path[:-1])[path[-1]] = value
    return obj


def _interesting(rng: random.Random, old: Any, *, big_ints: bool) -> tuple[str, Any]:
    choices: list[tuple[str, Any]] = [
        ("zero", 0), ("negative", -1), ("int32", 2**31), ("huge-int", 2**63 - 1),
        ("min-int", -(2**63)), ("inf", math.inf), ("-inf", -math.inf), ("nan", math.nan),
        ("1e300", 1e300), ("-1e300", -1e300), ("tiny", 1e-300), ("half", 0.5),
        ("long-string", "x" * LONG), ("empty-string", ""), ("null", None), ("true", True),
        ("empty-list", []), ("empty-map", {}), ("deep", _DEEP_TOKEN),
        ("long-list", [0] * 10_000), ("distinct-list", [i / 10 for i in range(1, 1001)]),
        ("str-of", str(old)), ("list-of", [old]),
        ("map-of", {"value": old}),
    ]
    if big_ints:
        choices.append(("digits", _BIG_TOKEN))
    if isinstance(old, int) and not isinstance(old, bool):
        choices += [("plus-one", old + 1), ("minus-one", old - 1), ("times-1000", old * 1000),
                    ("negated", -old)]
    if isinstance(old, str) and old:
        choices += [("other-name", old[::-1]), ("module-function", "os:getcwd"),
                    ("upper", old.upper())]
    return rng.choice(choices)


def mutate_value(rng: random.Random, doc: Any, *, under: tuple[Any, ...] = (),
                 big_ints: bool = True) -> tuple[str, Any]:
    """One mutation of a decoded JSON / msgpack document (changed in place and returned):
    a value replaced by a boundary or wrong-typed one, a key removed, renamed or added, a
    list shortened, lengthened or emptied. ``under``: only below this path."""
    paths = [p for p in _paths(_get(doc, under), under)]
    path = rng.choice(paths)
    old = _get(doc, path)
    parent = _get(doc, path[:-1]) if path else None
    ops = ["value"] * 4
    if isinstance(parent, dict):
        ops += ["delete-key", "rename-key", "extra-key"]
    if isinstance(parent, list):
        ops += ["delete-item", "repeat-item"]
    op = rng.choice(ops)
    where = path_text(path)
    if op == "value":
        what, new = _interesting(rng, old, big_ints=big_ints)
        return f"value:{what}@{where}", _set(doc, path, new)
    assert parent is not None
    key = path[-1]
    if op == "delete-key":
        del parent[key]
    elif op == "rename-key":
        parent[rng.choice([f"{key}_", str(key).upper(), "", f" {key}"])] = parent.pop(key)
    elif op == "extra-key":
        parent[rng.choice(["extra", "__class__", "default_mapping", "x" * 1000])] = old
    elif op == "delete-item":
        del parent[key]
    else:
        parent[key:key + 1] = [old] * rng.choice([2, 1000])
    return f"{op}@{where}", doc


def encode_json(doc: Any, rng: random.Random, *, indent: int | None = None) -> str:
    """``doc`` as JSON text, the sentinels spliced in (deep nesting, a huge integer)."""
    text = json.dumps(doc, indent=indent)
    text = text.replace(json.dumps(_DEEP_TOKEN), "[" * DEEP + "]" * DEEP)
    return text.replace(json.dumps(_BIG_TOKEN), huge_number(rng))


def encode_msgpack(doc: Any) -> bytes:
    """``doc`` as msgpack, a deep-nesting sentinel spliced in as arrays of arrays."""
    packed: bytes = msgpack.packb(doc, use_bin_type=True)
    return packed.replace(msgpack.packb(_DEEP_TOKEN), b"\x91" * DEEP + b"\xc0")
