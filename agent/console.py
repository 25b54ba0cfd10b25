"""argparse value types shared by the command-line tools (stdlib only)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse ``type``: a positive integer, or a one-line error with the ``!r``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value
