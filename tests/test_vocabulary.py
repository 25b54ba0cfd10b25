"""One vocabulary across every command (issue 32).

* :data:`CONCEPTS`, the table: one flag name per concept in every parser of every entry
  point (``pyproject.toml``'s ``[project.scripts]``, walked with every sub-command). An old
  spelling survives only as a hidden alias (``help=argparse.SUPPRESS``) that stores what the
  new name stores after one ``PROG: warning: OLD is deprecated ...`` line
  (:func:`agent.console.deprecated_alias`), or, for the dealer, as the reference dealer's own
  spelling beside the new one (:data:`REFERENCE_SPELLINGS`).
* A bad flag value exits 2 with argparse's one line in every command (the rule
  ``acpc-match`` already followed); on main ``solve --iterations -5``, ``lbr --hands -10``
  exited 1.
* Every command that reads a strategy file takes a bundled strategy's name, through the one
  resolver ``acpc-agent`` uses (:func:`agent.agents.resolve_strategy`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from agent import cli as agent_cli
from agent.agents import resolve_strategy
from evaluation import cli as match_cli
from evaluation import logtool
from strategies import cli as strategy_cli
from tests.support.parsers import PARSERS, entry_points, every_parser


@dataclass(frozen=True)
class Concept:
    """A concept's one flag name, the argparse ``dest`` names it may store into, and the
    spellings it had before (now hidden aliases, or gone)."""

    flag: str
    dests: frozenset[str]
    old: frozenset[str] = frozenset()


CONCEPTS: dict[str, Concept] = {
    "betting abstraction": Concept("--abstraction", frozenset({"abstraction", "betting"}),
                                   frozenset({"--betting"})),
    "parallel workers (threads, processes, matches)": Concept(
        "--workers", frozenset({"workers", "jobs"}), frozenset({"--jobs", "-j"})),
    "no progress output": Concept("--quiet", frozenset({"quiet", "no_progress"}),
                                  frozenset({"--no-progress"})),
    "figures as JSON": Concept("--json", frozenset({"json"})),
    "translation mapping(s)": Concept("--mappings", frozenset({"mappings", "mapping"}),
                                      frozenset({"--mapping"})),
    "purification(s)": Concept("--purify", frozenset({"purify"})),
    "size convention of translation": Concept("--sizes-in", frozenset({"sizes_in"})),
    "seed": Concept("--seed", frozenset({"seed"})),
    "iterations": Concept("--iterations", frozenset({"iterations"})),
    "hands": Concept("--hands", frozenset({"hands"})),
    "game": Concept("--game", frozenset({"game"})),
    "time per response (ms)": Concept("--t-response-ms", frozenset({"t_response_ms",
                                                                    "t_response"})),
    "time per hand (ms)": Concept("--t-hand-ms", frozenset({"t_hand_ms", "t_hand"})),
    "average time per hand (ms)": Concept("--t-per-hand-ms", frozenset({"t_per_hand_ms",
                                                                        "t_per_hand"})),
    "connection wait (ms)": Concept("--start-timeout-ms", frozenset({"start_timeout_ms",
                                                                     "start_timeout"})),
    "tracebacks on errors": Concept("--debug", frozenset({"debug"})),
    "re-solving mode": Concept("--resolve", frozenset({"resolve"}), frozenset({"--mode"})),
    "re-solving gadget(s)": Concept("--gadgets", frozenset({"gadget", "gadgets"}),
                                    frozenset({"--gadget"})),
    "CFR+ iterations per re-solve": Concept("--resolve-iterations",
                                            frozenset({"resolve_iterations"})),
    "re-solving depth limit(s)": Concept("--resolve-depth", frozenset({"resolve_depth"})),
    "depth limits' leaves": Concept("--resolve-leaf", frozenset({"resolve_leaf"})),
}
"""The vocabulary. Positional arguments are not flags and are left out (``acpc-agent GAME``,
``acpc-strategy size GAME``)."""

REFERENCE_SPELLINGS = {("acpc-dealer", "--t_response"), ("acpc-dealer", "--t_hand"),
                       ("acpc-dealer", "--t_per_hand"), ("acpc-dealer", "--start_timeout")}
"""The reference dealer's option names, which ``acpc-dealer`` keeps (scripts written for the
reference run unchanged) beside the project's names."""

SAMPLES = {"--jobs": "2", "-j": "2", "--betting": "fcpa", "--out": "x.json",
           "--mapping": "det-arith", "--gadget": "resolve", "--iterations": "30",
           "--mode": "always"}
"""A valid value for each hidden alias that takes one."""

REQUIRED = {"acpc-agent": ["leduc.limit.2p.game", "127.0.0.1", "5"],
            "acpc-strategy solve": ["--recipe", "kuhn.limit.3p"],
            "acpc-strategy lbr": ["x.strat"],
            "acpc-strategy graft": ["--base", "b", "--partition", "preflop", "--out", "o"],
            "acpc-strategy cards-pa": ["--out", "o.json"],
            "acpc-strategy learn-sizes": ["--game", "g", "--abstraction", "fcpa", "--learn",
                                          "0", "--out", "o.json"]}
"""What each parser needs besides the flag under test."""


def _hidden(action: argparse.Action) -> bool:
    return action.help == argparse.SUPPRESS


def _options() -> list[tuple[str, tuple[str, ...], argparse.ArgumentParser, argparse.Action]]:
    return [(prog, path, parser, action) for prog, path, parser in every_parser()
            for action in parser._actions if action.option_strings]


def test_every_entry_point_is_walked() -> None:
    assert entry_points() <= {prog.split()[0] for prog in PARSERS}
    progs = {prog for prog, _, _ in every_parser()}
    assert {"acpc-strategy solve", "acpc-strategy translation best-size", "acpc-log phh",
            "acpc-arena warmup", "acpc-agent explain"} <= progs


def test_a_concept_has_one_flag_name_in_every_parser() -> None:
    found: dict[str, set[str]] = {name: set() for name in CONCEPTS}
    wrong = []
    for prog, _, _, action in _options():
        if _hidden(action):
            continue
        for name, concept in CONCEPTS.items():
            if action.dest in concept.dests:
                found[name].add(prog)
                if concept.flag not in action.option_strings:
                    wrong.append(f"{prog}: {'/'.join(action.option_strings)} is {name}: "
                                 f"expected {concept.flag}")
            for option in action.option_strings:
                if option in concept.old and (prog, option) not in REFERENCE_SPELLINGS:
                    wrong.append(f"{prog}: {option} is the old name of {concept.flag}, "
                                 f"shown in --help")
    assert not wrong, "\n".join(wrong)
    # the table is about flags that exist: each concept is found, most in several commands
    assert all(found.values()), [name for name, progs in found.items() if not progs]
    assert len(found["parallel workers (threads, processes, matches)"]) >= 6
    assert len(found["no progress output"]) >= 8
    assert {"acpc-agent", "acpc-strategy lbr"} <= found["translation mapping(s)"]
    for name in ("re-solving mode", "re-solving gadget(s)", "CFR+ iterations per re-solve",
                 "re-solving depth limit(s)", "depth limits' leaves"):
        assert {"acpc-agent", "acpc-strategy lbr", "acpc-strategy resolve-lab"} <= found[name]


def test_every_quiet_has_its_short_form() -> None:
    quiet = [(prog, action.option_strings) for prog, _, _, action in _options()
             if "--quiet" in action.option_strings]
    assert len(quiet) >= 9 and all("-q" in options for _, options in quiet), quiet


def test_every_hidden_option_is_a_deprecated_alias_that_says_so(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Parse each hidden alias as a user would: the value lands where the new name puts it,
    after exactly one warning line naming both spellings."""
    aliases = [(prog, path, action) for prog, path, _, action in _options()
               if _hidden(action)]
    assert len(aliases) >= 9
    for prog, path, action in aliases:
        root = PARSERS[prog.split()[0] if prog != "acpc-agent explain" else prog]()
        for old in action.option_strings:
            value = [] if action.nargs == 0 else [SAMPLES[old]]
            visible = next(a for a in _parser_of(root, path)._actions
                           if a.dest == action.dest and not _hidden(a))
            new = next(o for o in visible.option_strings if o.startswith("--"))
            base = [*path, *REQUIRED.get(prog, [])]
            got = root.parse_args([*base, old, *value])
            err = capsys.readouterr().err.splitlines()
            assert err == [f"{prog}: warning: {old} is deprecated (kept for one release), "
                           f"use {new}"], (prog, old)
            assert got == root.parse_args([*base, new, *value]), (prog, old)
            assert capsys.readouterr().err == ""


def _parser_of(root: argparse.ArgumentParser, path: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = root
    for word in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


@pytest.mark.parametrize("argv", [
    ["solve", "--recipe", "kuhn.limit.3p", "--iterations", "-5"],  # exit 1 on main
    ["solve", "--recipe", "kuhn.limit.3p", "--minutes", "0"],  # exit 1 on main
    ["lbr", "leduc.nolimit.2p.fcpa.strat", "--sampled", "--hands", "-10"],  # exit 1 on main
    ["lbr", "leduc.nolimit.2p.fcpa.strat", "--workers", "0"],
    ["graft", "--base", "b", "--partition", "preflop", "--out", "o", "--workers", "0"],
    ["learn-sizes", "--game", "g", "--abstraction", "fcpa", "--learn", "0", "--out", "o",
     "--minutes", "-1"],
    ["inspect", "leduc.limit.2p.strat", "--samples", "-1"],
    ["translation", "best-size", "--iterations", "-1"],  # exit 1 on main
    ["resolve-lab", "--resolve-iterations", "0"],  # (as --iterations) exit 1 on main
    ["graft", "--base", "b", "--partition", "preflop", "--out", "o", "--target", "-1"],
    ["learn-sizes", "--game", "g", "--abstraction", "fcpa", "--learn", "0", "--out", "o",
     "--min-bet", "-1"],  # exit 1 on main, with another message
])
def test_a_bad_value_exits_2_with_one_line(argv: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        strategy_cli.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    prog = " ".join(["acpc-strategy", *argv[:2]] if argv[0] == "translation"
                    else ["acpc-strategy", argv[0]])
    assert err[-1].startswith(f"{prog}: error: argument --")
    assert "expected" in err[-1] and not any("Traceback" in line for line in err)


def test_acpc_match_and_acpc_agent_keep_the_same_rule(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert match_cli.main(["--hands", "-5"]) == 2
    assert match_cli.main(["--match-timeout", "-5"]) == 2  # on main: accepted, every match failed
    assert match_cli.main(["--workers", "0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "acpc-match: error: argument --workers: expected an integer 1..1024, " \
                      "got '0'"
    for argv in (["x.log", "--seat", "bad"], ["x.log"]):  # main: 1, after reading the logs
        with pytest.raises(SystemExit) as info:
            logtool.main(["aivat", "leduc.limit.2p.game", *argv])
        assert info.value.code == 2
        assert "--seat" in capsys.readouterr().err.splitlines()[-1]
    for flag, value in (("--time-guard-ms", "-1"), ("--resolve-ms", "0"),  # main: taken, 1
                        ("--resolve-iterations", "-3")):
        with pytest.raises(SystemExit) as info:
            agent_cli.main(["leduc.nolimit.2p.game", "127.0.0.1", "9", "--resolve", "round",
                            "--strategy", "leduc.nolimit.2p.fcpa.strat", flag, value])
        assert info.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].startswith(
            f"acpc-agent: error: argument {flag}: expected")


def test_bundled_names_work_wherever_a_strategy_file_does(
        capsys: pytest.CaptureFixture[str]) -> None:
    """README's ``inspect leduc.limit.2p.strat`` said 'No such file or directory' on main."""
    assert strategy_cli.main(["inspect", "leduc.limit.2p.strat", "--samples", "1"]) == 0
    out = capsys.readouterr().out
    assert f"file: {resolve_strategy('leduc.limit.2p.strat')}" in out
    assert strategy_cli.main(["exploit", "kuhn.limit.3p.strat"]) == 0
    assert "NashConv" in capsys.readouterr().out
    for argv, attribute in ((["graft", "--base", "leduc.limit.2p.strat", "--partition",
                              "preflop", "--out", "o.strat"], "base"),
                            (["cards", "--file", "holdem.nolimit.2p.strat"], "file")):
        args = strategy_cli.build_parser().parse_args(argv)
        strategy_cli.resolve_bundled(args)
        assert getattr(args, attribute) == str(resolve_strategy(argv[argv.index(
            f"--{attribute}") + 1]))
    assert strategy_cli.main(["inspect", "no-such.strat"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("acpc-strategy: error: expected a strategy file or a bundled "
                          "strategy (") and "built-in" not in err
