"""acpc-agent's command line rejects bad input before connecting: one line, no traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.cli import main
from tests.support import ROOT


@pytest.mark.parametrize("port", ["99999", "-1", "0", "http"])
def test_a_bad_port_is_one_line_before_connecting(port: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["leduc.limit.2p.game", "127.0.0.1", port])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"acpc-agent: error: argument port: expected a port number 1..65535, got {port!r}" \
        in err
    assert "Traceback" not in err


@pytest.mark.parametrize("spec", ["builtin:fold", "builtin:minraise"])
def test_every_registry_builtin_is_accepted(spec: str) -> None:
    from agent.acpc.gamefiles import load_game
    from agent.agents import make_policy

    policy = make_policy(spec, load_game("leduc.limit.2p.game"))
    assert type(policy).__name__ in ("FoldPolicy", "MinRaisePolicy")


@pytest.mark.parametrize("extra", [["--mappings", "det-arith"], ["--purify", "full"],
                                   ["--trace", "t.jsonl"], ["--reload"],
                                   ["--sizes-in", "real"], ["--verify", "full"]])
def test_file_options_with_a_builtin_are_an_error(extra: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["leduc.limit.2p.game", "127.0.0.1", "5000", "--strategy", "builtin:call",
              *extra])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"acpc-agent: error: {extra[0]} apply to strategy files, not to the built-in " \
        f"'builtin:call'" in err


def test_help_of_acpc_match_names_every_builtin(capsys: pytest.CaptureFixture[str]) -> None:
    from agent.agents import builtin_specs
    from evaluation.cli import main as match_main

    assert match_main(["--help"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    for spec in builtin_specs():
        assert spec in out


def test_usage_errors_exit_2_in_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The documented convention: 2 for a usage error (the dealer: 1, as the reference)."""
    from dealer.cli import main as dealer_main
    from evaluation.cli import main as match_main
    from evaluation.logtool import main as log_main
    from strategies.cli import main as strategy_main

    assert match_main(["--no-such-option"]) == 2
    for entry in (log_main, strategy_main):
        with pytest.raises(SystemExit) as exc:
            entry(["--no-such-option"])
        assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["--no-such-option"])
    assert exc.value.code == 2
    assert dealer_main(["--no-such-option"]) == 1
    capsys.readouterr()


def test_strategy_files_are_found_by_bundled_name(tmp_path: Path) -> None:
    from agent.acpc.gamefiles import load_game
    from agent.agents import make_policy, resolve_strategy
    from agent.data import bundled_strategies
    from evaluation.match.variants import parse_variant

    assert "leduc.limit.2p.strat" in bundled_strategies()
    policy = make_policy("leduc.limit.2p.strat", load_game("leduc.limit.2p.game"), seed=0)
    assert type(policy).__name__ == "StrategyPolicy"
    variant = parse_variant("a=leduc.limit.2p.strat,mapping=rand-pshar")
    assert Path(variant.strategy or "") == resolve_strategy("leduc.limit.2p.strat")
    with pytest.raises(ValueError, match=r"expected a strategy file or a bundled strategy \("):
        resolve_strategy("no-such.strat")
    # a file of that name where we stand wins over the bundled one
    (tmp_path / "leduc.limit.2p.strat").write_bytes(b"x")
    os.chdir(tmp_path)
    try:
        assert resolve_strategy("leduc.limit.2p.strat") == Path("leduc.limit.2p.strat")
    finally:
        os.chdir(ROOT)


def test_summary_speaks_the_arena_unit_too() -> None:
    """Issue 19: agent summaries were in chips per hand while matches are in mbb/h."""
    from agent.client import Summary

    text = Summary(hands=4, chips_won=-300.0, big_blind=100).describe()
    assert "(-75.000 chips/hand, -750.0 mbb/h)" in text
    assert "mbb/h" not in Summary(hands=4, chips_won=3.0).describe()  # no blinds: chips only
