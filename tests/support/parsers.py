"""Every command-line parser of the project, for the tests that walk them (the reference
pages' completeness in ``tests/test_docs.py``, the flag vocabulary in
``tests/test_vocabulary.py``).

:data:`PARSERS` maps each entry point of ``pyproject.toml``'s ``[project.scripts]`` (and
``acpc-agent explain``, which ``acpc-agent`` dispatches to its own parser) to the function
that builds the very parser the entry point uses; :func:`walk` yields every parser and
sub-parser under them with the arguments that reach it.
"""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Callable, Iterator

from agent.cli import build_parser as agent_parser
from agent.explain import build_parser as explain_parser
from dealer.cli import build_parser as dealer_parser
from evaluation.arena import build_parser as arena_parser
from evaluation.cli import build_parser as match_parser
from evaluation.logtool import build_parser as log_parser
from strategies.cli import build_parser as strategy_parser
from tests.support import ROOT

PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "acpc-agent": agent_parser,
    "acpc-agent explain": explain_parser,
    "acpc-dealer": dealer_parser,
    "acpc-log": log_parser,
    "acpc-match": match_parser,
    "acpc-strategy": strategy_parser,
    "acpc-arena": arena_parser,
}


def entry_points() -> set[str]:
    """The command names of ``[project.scripts]``."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["scripts"])


def walk(prog: str, parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
         ) -> Iterator[tuple[str, tuple[str, ...], argparse.ArgumentParser]]:
    """``(command, sub-command words, parser)`` for ``parser`` and every sub-parser under it,
    recursively (``("acpc-strategy translation exploit", ("translation", "exploit"), p)``)."""
    yield prog, path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(f"{prog} {name}", sub, (*path, name))


def every_parser() -> Iterator[tuple[str, tuple[str, ...], argparse.ArgumentParser]]:
    """:func:`walk` over every entry point of :data:`PARSERS`."""
    for prog, make in PARSERS.items():
        yield from walk(prog, make())
