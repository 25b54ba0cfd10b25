"""The notice around a first numba compile, and the warm-up command."""

from __future__ import annotations

import argparse
import io
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.console import compile_notice, is_cached, port_number, positive_int, ticking


def _fake(index: Path) -> object:
    """A stand-in with the attributes numba's cached dispatchers have."""
    return SimpleNamespace(_cache=SimpleNamespace(_cache_file=SimpleNamespace(
        _index_path=str(index))))


def test_a_cold_kernel_gets_a_notice_and_ticks(tmp_path: Path) -> None:
    out = io.StringIO()
    with compile_notice("prog", [_fake(tmp_path / "missing.nbi")], stream=out, every=0.05):
        import time

        time.sleep(0.2)
    text = out.getvalue()
    assert text.startswith("prog: compiling numba kernels for their first use")
    assert "prog: ... still compiling (" in text
    assert "prog: kernels ready (" in text


def test_warm_kernels_are_silent(tmp_path: Path) -> None:
    (tmp_path / "k.nbi").write_bytes(b"")
    out = io.StringIO()
    with compile_notice("prog", [_fake(tmp_path / "k.nbi"), object()], stream=out):
        pass
    assert out.getvalue() == ""
    assert is_cached(object())  # not a cached dispatcher: nothing to say


def test_a_real_kernel_is_cached_once_it_ran() -> None:
    from agent import handeval

    handeval.evaluate7(0, 1, 2, 3, 4, 5, 6)
    assert is_cached(handeval._evaluate7_kernel)


def test_warmup_command_runs_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    from evaluation.arena import ESTIMATOR_STEP, main
    from evaluation.estimators import fastwalk

    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    for step in ("hand evaluator", "hold'em buckets", "potential-aware buckets", "suit isomorphism",
                 "strategy files and policies", "solvers and best response",
                 "deal-pool solver", "sampled best response", "strength tables",
                 "translation lab", "subgame re-solving", ESTIMATOR_STEP, "done in"):
        assert f"acpc-arena warmup: {step}" in err
    line = next(x for x in err.splitlines() if ESTIMATOR_STEP in x)
    if "skipped: no cached flop table" not in line:  # the walk ran: its kernel is cached now
        assert is_cached(fastwalk.sampled_values), line


def test_policy_kernels_are_those_the_game_compiles() -> None:
    """A Leduc strategy never compiles the hold'em kernels: listing them would bring the
    first-use notice back on every run."""
    from agent import handeval
    from agent.acpc.gamefiles import load_game
    from agent.agents import policy_kernels

    leduc = policy_kernels("leduc.limit.2p.strat", load_game("leduc.limit.2p.game"))
    holdem = policy_kernels("holdem.nolimit.2p.strat",
                            load_game("holdem.nolimit.2p.reverse_blinds.game"))
    assert handeval._evaluate7_kernel not in leduc and len(leduc) == 2
    assert handeval._evaluate7_kernel in holdem and len(holdem) == 4
    assert policy_kernels("builtin:call", load_game("leduc.limit.2p.game")) == []


def test_a_long_step_says_it_is_still_running_and_stops_saying_so_after() -> None:
    said: list[str] = []
    with ticking(said.append, "learning", every=0.05):
        time.sleep(1.0)
    ticks = len(said)
    assert ticks >= 1 and all(re.fullmatch(r"\.\.\. learning \(\d+ s\)", t) for t in said)
    time.sleep(0.2)
    assert len(said) == ticks  # the ticker ended with the block


@pytest.mark.parametrize("parse", [positive_int, port_number])
def test_number_options_quote_a_long_value_as_an_excerpt(parse: Any) -> None:
    """A 5,000-digit (or 5,000-letter) value is quoted cut, with its length, in one short
    line, not echoed whole."""
    for text in ("9" * 5000, "x" * 5000):
        with pytest.raises(argparse.ArgumentTypeError) as info:
            parse(text)
        message = str(info.value)
        assert len(message) < 200 and "5,000 characters" in message, message
