"""One error hierarchy for the whole project.

Every error derives from :class:`AcpcError` and, where one fits, from the matching builtin,
so callers may catch either. Messages say what was expected, where, and the ``!r`` of what
came. The pure core raises and never logs. Must not import anything outside the stdlib.
"""

from __future__ import annotations


class AcpcError(Exception):
    """Base class of every error raised by acpc-arena."""


class GameDefError(AcpcError, ValueError):
    """A game definition file or value is malformed or inconsistent."""


class LocalProtocolError(AcpcError):
    """Our own side tried to do something the protocol does not allow."""


class RemoteProtocolError(AcpcError):
    """The peer sent something that does not follow the protocol."""


class IllegalActionError(AcpcError, ValueError):
    """An action is not legal in the current betting state."""


class StrategyFileError(AcpcError, ValueError):
    """A strategy file is corrupt, truncated, or for another game."""


class CardError(AcpcError, ValueError):
    """A card, hand or deal that is not valid (out of the deck, repeated, wrong count)."""


class AbstractionError(AcpcError, ValueError):
    """A card or betting abstraction, translation mapping or purification that cannot be
    built or applied to the given game or input."""


class NetworkError(AcpcError, OSError):
    """A connection that could not be made or was lost; the message names the host and
    port (an :class:`OSError` too, for callers that catch those)."""


class UsageError(AcpcError, ValueError):
    """An argument outside what a function, a command or a file format accepts (the
    message says what was expected and what came)."""


def whole_lines() -> None:
    """Make this process's standard error write each line in one piece.

    Python writes ``print(text, file=sys.stderr)`` as two writes, the text and then its
    newline; two programs sharing one terminal or pipe (a dealer and its agents started by
    one shell) could then interleave into one merged line. Every command calls this first:
    standard error keeps its text until the line ends, then writes it whole (one write, so
    whole on a pipe). Only the process's own standard error is changed (not a stream a
    caller or a test put in its place)."""
    import io
    import sys

    stream = sys.stderr
    if stream is sys.__stderr__ and isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(write_through=False, line_buffering=True)
