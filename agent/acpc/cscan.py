"""Integers read the way the reference dealer's C code reads them (glibc ``sscanf``).

``%d`` and ``%u`` skip leading C whitespace, take one optional sign and at least one
digit, convert through a saturating 64-bit ``strtol``/``strtoul`` (a minus sign negates
modulo 2**64 for ``%u``), and store the low 32 bits. Mirroring this is what makes
``r4294967496`` a raise to 200 and ``VERSION:4294967298.0.0`` version 2, as with the
reference. Pure and stdlib only.
"""

from __future__ import annotations

C_SPACE = " \t\n\v\f\r"
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_U64_MAX = 2**64 - 1
_MAX_DIGITS = 20
"""Significant digits of the largest 64-bit magnitude (``2**64 - 1``)."""


def scan_c_int(text: str, pos: int, *, unsigned: bool = False) -> tuple[int, int] | None:
    """Read ``%d`` (or ``%u`` with ``unsigned``) at ``text[pos:]``.

    Returns:
        ``(value, end)`` with ``end`` the index after the digits, or ``None`` if no number
        starts there.
    """
    n = len(text)
    i = pos
    while i < n and text[i] in C_SPACE:
        i += 1
    negative = False
    if i < n and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    start = i
    while i < n and "0" <= text[i] <= "9":
        i += 1
    if i == start:
        return None
    # strtol saturates: past 20 significant digits only "too large" matters, and int() of
    # thousands of digits would hit the interpreter's conversion limit (a ValueError)
    digits = text[start:i].lstrip("0")
    magnitude = int(digits or "0") if len(digits) <= _MAX_DIGITS else _U64_MAX + 1
    if unsigned:
        value = _U64_MAX if magnitude > _U64_MAX else (-magnitude & _U64_MAX if negative
                                                          else magnitude)
        return value & 0xFFFFFFFF, i
    value = -magnitude if negative else magnitude
    value = max(_I64_MIN, min(_I64_MAX, value))
    return (value + 2**31) % 2**32 - 2**31, i
