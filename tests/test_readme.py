"""README documents every command, subcommand and flag (issue 19): walks each command's
argparse parser (the very object its entry point uses) and looks for every name in README."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator

import pytest

from agent.cli import build_parser as agent_parser
from agent.explain import build_parser as explain_parser
from dealer.cli import build_parser as dealer_parser
from evaluation.arena import build_parser as arena_parser
from evaluation.cli import build_parser as match_parser
from evaluation.logtool import _build_parser as log_parser
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


def _walk(prog: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """(command, name) for every long option and every subcommand, recursively."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prog, name
                yield from _walk(f"{prog} {name}", sub)
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                yield prog, option


NAMES = sorted({item for prog, make in PARSERS.items() for item in _walk(prog, make())})


def test_every_parser_is_walked() -> None:
    assert len(NAMES) > 100
    assert ("acpc-strategy", "learn-sizes") in NAMES and ("acpc-match", "--plot") in NAMES


@pytest.mark.parametrize(("command", "name"), NAMES, ids=[f"{c}:{n}" for c, n in NAMES])
def test_readme_documents_it(command: str, name: str) -> None:
    readme = (ROOT / "README.md").read_text()
    if name.startswith("--"):
        pattern = re.escape(name) + r"(?![\w-])"
    else:  # a subcommand, after its parent's last word, alone or in a '|' list
        parent = re.escape(command.split()[-1])
        pattern = parent + r"[ |](?:[\w-]+\|)*" + re.escape(name) + r"(?![\w-])"
    assert re.search(pattern, readme), f"README does not mention {command} {name}"
