"""What the command-line tools share on the console: argparse value types, one progress
display, and the notice shown while numba compiles kernels for their first use
(:func:`compile_notice`).

:func:`make_progress` is the one progress implementation of the project (the match runner's
hands/s and ETA, a solver's iterations/s and exploitability): a rich bar when ``rich`` is
installed and the stream is a terminal, plain lines otherwise. A caller gives the bar a
description, a total (or ``None`` for an open-ended count), the names of the text fields it
shows beside the bar, and a function that turns the position and fields into one plain line;
then it calls :meth:`Progress.update` as work is done, :meth:`Progress.note` for a message,
and :meth:`Progress.close` at the end. Plain lines come at most every ``plain_every``
seconds (0: at every update) and once more at :meth:`Progress.close` if the last update was
not shown, so a short run still reports where it ended.

Imports the stdlib, and ``rich`` lazily when a bar is drawn; no numpy or numba.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TextIO

from agent.acpc.limits import excerpt

__all__ = ["PlainLine", "Progress", "compile_notice", "deprecated_alias", "is_cached",
           "make_progress", "nonnegative_float", "nonnegative_int", "port_number",
           "positive_float", "positive_int", "ticking"]


def positive_int(text: str) -> int:
    """An argparse ``type``: a positive integer, or a one-line error with the ``!r``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, got {excerpt(text)}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {excerpt(text)}")
    return value


def nonnegative_int(text: str) -> int:
    """An argparse ``type``: an integer >= 0, or a one-line error with the ``!r``."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"expected an integer >= 0, got {excerpt(text)}") from None
    return value


def nonnegative_float(text: str) -> float:
    """An argparse ``type``: a finite number >= 0, or a one-line error with the ``!r``."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a number >= 0, got {excerpt(text)}") from None
    return value


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number > 0, or a one-line error with the ``!r``."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a number > 0, got {excerpt(text)}") from None
    return value


def deprecated_alias(parser: argparse.ArgumentParser, *old: str, new: str) -> None:
    """Add the old spellings ``old`` of ``parser``'s option ``new`` (added before) as hidden
    aliases (``--help`` does not show them): each stores what ``new`` stores, after one
    ``PROG: warning: OLD is deprecated, use NEW`` line on stderr. The project's rule: one
    flag name per concept (``tests/test_vocabulary.py`` holds the table); a renamed flag's old
    spelling is kept for one release this way."""
    target = next(a for a in parser._actions if new in a.option_strings)

    class _Alias(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                     values: Any, option_string: str | None = None) -> None:
            print(f"{parser.prog}: warning: {option_string} is deprecated (kept for one "
                  f"release), use {new}", file=sys.stderr)
            target(parser, namespace, values, new)

    alias = parser.add_argument(*old, action=_Alias, dest=target.dest, nargs=target.nargs,
                                choices=target.choices, metavar=target.metavar,
                                default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    alias.type = target.type  # the same conversion and message as ``new``


def port_number(text: str) -> int:
    """An argparse ``type``: a TCP port 1..65535, or a one-line error with the ``!r``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a port number 1..65535, got {excerpt(text)}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 1..65535, got {excerpt(text)}")
    return value


# --------------------------------------------------------------------------- progress

PlainLine = Callable[[float, Mapping[str, str]], str]
"""Turns the position and the text fields into one plain progress line."""


class Progress(Protocol):
    """A progress display (see the module docstring)."""

    def update(self, completed: float, **fields: str) -> None:
        """Move to ``completed`` and set text fields (unknown names are kept for the line)."""

    def note(self, text: str) -> None:
        """A message, printed on its own line above the bar."""

    def close(self) -> None:
        """Stop the display (plain: print the last line if it was not shown)."""


class _Plain:
    """Plain lines on a stream, at most every ``every`` seconds, and one at the end."""

    def __init__(self, stream: TextIO, line: PlainLine, every: float, quiet: bool) -> None:
        self.stream = stream
        self.line = line
        self.every = every
        self.quiet = quiet
        self.last_print = -float("inf")
        self.pending: tuple[float, dict[str, str]] | None = None

    def update(self, completed: float, **fields: str) -> None:
        self.pending = (completed, fields)
        now = time.monotonic()
        if not self.quiet and now - self.last_print >= self.every:
            self._flush(now)

    def _flush(self, now: float) -> None:
        assert self.pending is not None
        self.stream.write(self.line(*self.pending) + "\n")
        self.stream.flush()
        self.pending = None
        self.last_print = now

    def note(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if not self.quiet and self.pending is not None and self.every > 0:
            self._flush(time.monotonic())


class _Rich:
    """A rich bar: description, bar, the named text fields, elapsed and remaining time."""

    def __init__(self, stream: TextIO, description: str, total: float | None,
                 completed: float, fields: Sequence[str]) -> None:
        p = importlib.import_module("rich.progress")
        console = importlib.import_module("rich.console").Console(file=stream)
        columns: list[Any] = [p.TextColumn("[bold]{task.description}"), p.BarColumn()]
        columns += [p.TextColumn(f"{{task.fields[{name}]}}") for name in fields]
        columns += [p.TimeElapsedColumn(), p.TimeRemainingColumn()]
        self.fields = tuple(fields)
        self.progress = p.Progress(*columns, console=console, transient=False)
        self.progress.start()
        self.task = self.progress.add_task(description, total=total, completed=completed,
                                           **dict.fromkeys(self.fields, ""))

    def update(self, completed: float, **fields: str) -> None:
        shown = {k: v for k, v in fields.items() if k in self.fields}
        self.progress.update(self.task, completed=completed, **shown)

    def note(self, text: str) -> None:
        self.progress.console.print(text, markup=False, highlight=False)

    def close(self) -> None:
        self.progress.stop()


def make_progress(
    *, enabled: bool, description: str, total: float | None, line: PlainLine,
    completed: float = 0.0, fields: Sequence[str] = (), stream: TextIO | None = None,
    plain_every: float = 10.0,
) -> Progress:
    """A rich bar if ``enabled``, rich is installed and ``stream`` (default stderr) is a
    terminal, else plain lines (none but notes if not ``enabled``)."""
    stream = sys.stderr if stream is None else stream
    if enabled and stream.isatty():
        try:
            return _Rich(stream, description, total, completed, fields)
        except ImportError:
            pass
    return _Plain(stream, line, plain_every, quiet=not enabled)


# --------------------------------------------------------------------------- first use


def is_cached(dispatcher: Any) -> bool:
    """True if numba's on-disk cache holds compiled code of ``dispatcher`` (a kernel of this
    module's decorators); also True when the JIT is off (nothing to compile)."""
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return True
    cache = getattr(dispatcher, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    if not isinstance(index, str):
        return True  # not a cached dispatcher (or numba changed): say nothing
    return os.path.exists(index)


WARMUP_HINT = "'acpc-arena warmup' does it ahead of time"
""":func:`compile_notice`'s default hint: the kernels ``acpc-arena warmup`` compiles."""


@contextlib.contextmanager
def ticking(say: Callable[[str], None], what: str, every: float) -> Iterator[None]:
    """Around one long step that reports nothing itself (a compile, a kernel call): say
    ``... <what> (<elapsed> s)`` every ``every`` seconds until the block ends."""
    start = time.monotonic()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(every):
            say(f"... {what} ({time.monotonic() - start:.0f} s)")

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()


@contextlib.contextmanager
def compile_notice(prog: str, kernels: Sequence[Any], *, stream: TextIO | None = None,
                   every: float = 5.0, hint: str = WARMUP_HINT) -> Iterator[None]:
    """Around work that may compile ``kernels``: if any is not cached yet, say so in one
    line (with ``hint``: what avoids the wait), report the elapsed time every ``every``
    seconds while the block runs, and how long it took at the end. Silent when everything
    is cached."""
    out = sys.stderr if stream is None else stream
    if all(is_cached(k) for k in kernels):
        yield
        return

    def say(text: str) -> None:
        print(f"{prog}: {text}", file=out, flush=True)

    say(f"compiling numba kernels for their first use on this install (once; {hint}) ...")
    start = time.monotonic()
    try:
        with ticking(say, "still compiling", every):
            yield
    finally:
        print(f"{prog}: kernels ready ({time.monotonic() - start:.1f} s)", file=out,
              flush=True)
