"""The terminal player (``acpc-agent --human``): typed input never becomes an illegal action,
and a person plays a real dealer through a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import random
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.acpc.betsize import pot_after_call
from agent.acpc.betting import (
    CALL,
    FOLD,
    LIMIT_RAISE,
    Action,
    ActionKind,
    BettingState,
    parse_betting,
)
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState
from agent.cli import main as agent_main
from agent.human import HumanPlayer, PlayerLeft
from tests.support import ROOT

HOST = "127.0.0.1"
WORDS = ["f", "fold", "c", "call", "k", "check", "r", "raise", "min", "half", "pot", "allin",
         "max", "x", "", "?", "r 0", "r -5", "r abc", "f 3", "c c", "r 1 2", "pot 3"]


def random_states(game_name: str, n: int, seed: int) -> list[BettingState]:
    """States where someone is to act, reached by random legal play."""
    game = load_game(game_name)
    rng = random.Random(seed)
    out: list[BettingState] = []
    while len(out) < n:
        state = BettingState.initial(game)
        while not state.finished:
            out.append(state)
            kinds = state.legal_actions()
            kind = rng.choice(kinds)
            if kind is ActionKind.RAISE:
                lo, hi = state.raise_bounds() or (0, 0)
                state = state.apply(Action(kind, rng.randint(lo, hi)) if game.is_nolimit
                                    else LIMIT_RAISE)
            else:
                state = state.apply(FOLD if kind is ActionKind.FOLD else CALL)
    return out


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds.game",
                                       "holdem.nolimit.3p.game", "leduc.limit.2p.game",
                                       "holdem.limit.2p.reverse_blinds.game"])
def test_typed_input_is_a_legal_action_or_a_reason(game_name: str) -> None:
    """Every line either parses to an action the rules engine accepts, or to a reason; the
    oracle is BettingState.is_legal and the raise bounds."""
    game = load_game(game_name)
    player = HumanPlayer(game, io.StringIO(), io.StringIO())
    rng = random.Random(7)
    for state in random_states(game_name, 300, 3):
        bounds = state.raise_bounds()
        lines = [*WORDS]
        if bounds is not None:
            lo, hi = bounds
            lines += [f"r {lo - 1}", f"r {hi + 1}", f"r {rng.randint(lo, hi)}", f"r{lo}",
                      f"raise {hi}"]
        for line in lines:
            got = player.parse(line, state)
            if isinstance(got, str):
                assert got and "\n" not in got
                continue
            assert state.is_legal(got), (line, state.betting, got)
            if got.kind is ActionKind.FOLD:
                assert line.split()[0] in ("f", "fold") and state.can_fold()
            if got.kind is ActionKind.RAISE and game.is_nolimit:
                assert bounds is not None and bounds[0] <= got.raise_to <= bounds[1]
                word = line.split()[0]
                if word == "pot":
                    want = state.max_spent + pot_after_call(state)
                    assert got.raise_to == min(max(want, bounds[0]), bounds[1])
                if word in ("min", "allin", "max"):
                    assert got.raise_to == bounds[0 if word == "min" else 1]
                if word.startswith("r") and word not in ("r", "raise"):
                    assert got.raise_to == int(word[1:])
        # a bad line is never an action: fold with nothing to call, a raise past the cap
        if not state.can_fold():
            assert isinstance(player.parse("f", state), str)
        if bounds is None:
            assert isinstance(player.parse("r 100", state), str)
            assert isinstance(player.parse("pot", state), str)
        if not game.is_nolimit:
            assert isinstance(player.parse("pot", state), str)


def test_act_reprompts_until_legal_and_quit_leaves() -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    state = BettingState.initial(game)
    ms = MatchState(state.player, 0, state, ((0, 1), ()), ())
    out = io.StringIO()
    player = HumanPlayer(game, io.StringIO("x\nr 10\nf 2\npot\n"), out)
    action = player.act(ms)
    assert action == Action(ActionKind.RAISE, state.max_spent + pot_after_call(state))
    text = out.getvalue()
    assert text.count("> ") == 4
    assert "expected f, c, r N, min, half, pot, allin or ?, got 'x'" in text
    assert "expected a raise to 200..20000" in text
    with pytest.raises(PlayerLeft):
        HumanPlayer(game, io.StringIO("quit\n"), io.StringIO()).act(ms)
    with pytest.raises(PlayerLeft):
        HumanPlayer(game, io.StringIO(""), io.StringIO()).act(ms)


def test_human_takes_no_agent_options(capsys: pytest.CaptureFixture[str]) -> None:
    for extra in (["--strategy", "builtin:call"], ["--seed", "3"], ["--reload"]):
        with pytest.raises(SystemExit) as exc:
            agent_main(["leduc.limit.2p.game", HOST, "5000", "--human", *extra])
        assert exc.value.code == 2
        assert f"{extra[0]} apply to an agent, not to --human" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        agent_main(["leduc.limit.2p.game", HOST, "5000", "--opponent", "x"])
    assert exc.value.code == 2


# --------------------------------------------------------------------------- through a pty


class Terminal:
    """``acpc-agent --human`` on a pseudo-terminal: type lines, wait for text."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent.cli", *args], cwd=cwd, stdin=slave, stdout=slave,
            stderr=slave, close_fds=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        os.close(slave)
        self.text = ""
        self.pos = 0

    def read_until(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """Read until ``pattern`` matches the output after the last match; return it."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while True:
            m = rx.search(self.text, self.pos)
            if m is not None:
                self.pos = m.end()
                return m
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} in {self.text[self.pos:][-3000:]!r}"
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    m = rx.search(self.text, self.pos)
                    assert m is not None, f"EOF, no {pattern!r} in {self.text[-3000:]!r}"
                    self.pos = m.end()
                    return m
                self.text += chunk.decode("utf-8", "replace").replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=60)
        finally:
            os.close(self.master)


def start_dealer(tmp_path: Path, game: str, hands: int, seed: int) -> tuple[
        subprocess.Popen[bytes], list[int]]:
    dealer = subprocess.Popen(
        [sys.executable, "-m", "dealer.cli", "m", game, str(hands), str(seed), "you", "bot",
         "--t_per_hand", "600000", "-q"], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert dealer.stdout is not None
    ports = [int(p) for p in dealer.stdout.readline().split()]
    assert len(ports) == 2
    return dealer, ports


def play_through_pty(tmp_path: Path, game: str, hands: int, seed: int, choose: object,
                     opponent: str = "builtin:call") -> tuple[Terminal, list[str],
                                                              list[list[str]]]:
    """Dealer, ``opponent`` in seat 2, the pty player in seat 1; ``choose(choices, turn)``
    returns the lines to type at each turn (the last one legal). Returns the terminal, the
    log's STATE lines and what was typed per turn."""
    dealer, ports = start_dealer(tmp_path, game, hands, seed)
    bot = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", game, HOST, str(ports[1]), "--strategy",
         opponent, "--quiet"], cwd=tmp_path, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    term = Terminal([game, HOST, str(ports[0]), "--human", "--opponent", opponent], tmp_path)
    typed: list[list[str]] = []
    try:
        first = 300.0  # the opponent may compile numba kernels before it connects
        for _ in range(200):  # bounded: a handful of turns per hand
            m = term.read_until(r"your turn: (.*)\n|acpc-agent: hands (\d+)", first)
            first = 60.0
            if m.group(1) is None:
                break
            lines = choose(m.group(1), len(typed))  # type: ignore[operator]
            typed.append(lines)
            for line in lines[:-1]:
                term.read_until(r"> ")
                term.type(line)
                term.read_until(r"\n(expected|nothing|no raise|limit game|choices)[^\n]*\n")
            term.read_until(r"> ")
            term.type(lines[-1])
        assert term.close() == 0
        assert dealer.wait(timeout=60) == 0
        assert bot.wait(timeout=60) == 0
    finally:
        for proc in (dealer, bot, term.proc):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    log = (tmp_path / "m.log").read_text().splitlines()
    return term, [x for x in log if x.startswith("STATE:")], typed


def raises_by(game_name: str, states: list[str], name: str) -> int:
    """Raises the seat called ``name`` made, from the log's STATE lines."""
    game = load_game(game_name)
    count = 0
    for line in states:
        _, _, betting, _, _, names = line.split(":")
        me = names.split("|").index(name)
        state = BettingState.initial(game)
        final = parse_betting(game, betting)
        for acts in final.actions:
            for action in acts:
                if action.kind is ActionKind.RAISE and state.player == me:
                    count += 1
                state = state.apply(action)
    return count


def test_a_person_plays_nolimit_holdem_through_a_pty(tmp_path: Path) -> None:
    picks: list[str] = []

    def choose(choices: str, turn: int) -> list[str]:
        if turn == 0:  # bad lines first, then the pot raise the choices announce
            pot = re.search(r"pot = r (\d+)", choices)
            assert pot is not None, choices
            picks.append("r" + pot.group(1))
            return ["x", "r 5", "r 99999999", "pot"]
        if turn == 1 and "r N" in choices:
            lo = int(re.search(r"\((\d+)\.\.", choices).group(1))  # type: ignore[union-attr]
            picks.append(f"r{lo + 77}")
            return ["?", f"r {lo + 77}"]
        return ["c"]

    term, states, typed = play_through_pty(tmp_path, "holdem.nolimit.2p.reverse_blinds.game",
                                           3, 5, choose)
    assert len(states) == 3
    text = term.text
    for want in ("=== hand 1: you are P0 of 2 (opponent: builtin:call) ===", "your cards: ",
                 "expected f, c, r N, min, half, pot, allin or ?, got 'x'",
                 "expected a raise to 200..20000", "choices: ", "--- flop: ", "showdown",
                 "result: you "):
        assert want in text, want
    assert len(typed) >= 4
    # the typed raises reached the dealer: the log's betting has them, in order, by us
    bettings = "".join(line.split(":")[2] for line in states)
    first = bettings.find(picks[0])
    assert first >= 0 and bettings.find(picks[1], first) > first, (picks, bettings)
    # the final result line agrees with the dealer's log
    ours = 0.0
    for line in states:
        _, _, _, _, values, names = line.split(":")
        ours += float(values.split("|")[names.split("|").index("you")])
    assert re.search(rf"match {ours:+g} after 3 hands", text), (ours, text[-500:])
    assert f"acpc-agent: hands 3, chips won {ours:g}" in text


def test_a_person_plays_limit_leduc_against_the_bundled_strategy(tmp_path: Path) -> None:
    def choose(choices: str, turn: int) -> list[str]:
        if "r = raise" in choices:
            return ["pot", "r 4", "r"]
        if "f = fold" in choices and turn % 3 == 2:
            return ["f"]
        return ["c"]

    term, states, typed = play_through_pty(tmp_path, "leduc.limit.2p.game", 6, 2, choose,
                                           opponent="leduc.limit.2p.strat")
    assert len(states) == 6
    assert "limit game: type r to raise" in term.text
    assert "--- round 2: " in term.text and "(opponent: leduc.limit.2p.strat)" in term.text
    raises = sum(1 for t in typed if t[-1] == "r")
    assert raises > 0
    # every raise we typed is in the log, made by our seat, and no other
    assert raises_by("leduc.limit.2p.game", states, "you") == raises
    folds = sum(1 for t in typed if t[-1] == "f")
    assert sum(1 for line in states if line.split(":")[2].endswith("f")) >= folds


@pytest.mark.parametrize("how", ["quit", "ctrl-c"])
def test_quit_leaves_the_match_cleanly(tmp_path: Path, how: str) -> None:
    dealer, ports = start_dealer(tmp_path, "leduc.limit.2p.game", 3, 1)
    bot = subprocess.Popen(
        [sys.executable, "-m", "agent.cli", "leduc.limit.2p.game", HOST, str(ports[1]),
         "--strategy", "builtin:call", "--quiet"], cwd=tmp_path, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    term = Terminal(["leduc.limit.2p.game", HOST, str(ports[0]), "--human"], tmp_path)
    try:
        term.read_until(r"your turn: ")
        term.read_until(r"> ")
        if how == "quit":
            term.type("quit")
            term.read_until(r"acpc-agent: you left the match \(typed 'quit'\) after 0 hands, "
                            r"chips won 0")
        else:
            term.proc.send_signal(signal.SIGINT)
            term.read_until(r"acpc-agent: you left the match \(Ctrl-C\) after 0 hands")
        assert "Traceback" not in term.text
        assert term.close() == 0
    finally:
        for proc in (dealer, bot, term.proc):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
