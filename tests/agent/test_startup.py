"""Start-up: commands that need no kernel import no numba; an agent playing the bundled
hold'em file answers its first (preflop) decision before numba is imported, and its later
decisions equal those of the eagerly built card abstraction; the kernel stamp."""

from __future__ import annotations

import itertools
import json
import os
import random
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent.abstraction.deferred import DeferredCards, deferred_card_abstraction
from agent.acpc.betting import CALL, BettingState, parse_action
from agent.acpc.cards import parse_cards
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import format_matchstate, view_of
from agent.builtin import Policy
from agent.kernelstamp import kernels_known_warm, mark_kernels_warm, stamp_path
from tests.support import ROOT

HOLDEM = "holdem.nolimit.2p.strat"
HOLDEM_PA = "holdem.nolimit.2p.pa.strat"
NL2 = "holdem.nolimit.2p.reverse_blinds.game"

_WRAP = textwrap.dedent("""
    import contextlib, importlib, io, json, sys
    module, *argv = sys.argv[1:]
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            status = importlib.import_module(module).main(argv)
    except SystemExit as exc:
        status = exc.code
    print(json.dumps({"status": status, "numba": "numba" in sys.modules,
                      "output": sink.getvalue()[-500:]}))
""")

COMMANDS = [
    ("agent.cli", ["--help"]),
    ("agent.cli", ["explain", "--help"]),
    ("dealer.cli", []),
    ("evaluation.cli", ["--help"]),
    ("evaluation.logtool", ["--help"]),
    ("evaluation.logtool", ["verify", "leduc.limit.2p.game", "tests/data/logs/leduc_1000.log"]),
    ("strategies.cli", ["--help"]),
    ("strategies.cli", ["list"]),
    ("evaluation.arena", ["--help"]),
]


def _run(code: str, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=False, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(("module", "argv"), COMMANDS,
                         ids=[" ".join([m, *a]) for m, a in COMMANDS])
def test_commands_that_need_no_kernel_import_no_numba(module: str, argv: list[str]) -> None:
    result = _run(_WRAP, module, *argv)
    assert result["status"] in (0, 1, 2, None), result
    assert result["numba"] is False, f"{module} {argv} imported numba: {result}"


def _filled_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  strategy: str = HOLDEM) -> dict[str, str]:
    """A fresh acpc-arena cache holding what a first run leaves: a bundled hold'em file's
    tree and its verified record; the environment of a process that uses it."""
    from agent.agents import resolve_strategy
    from agent.strategy.fileformat import load_strategy

    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    load_strategy(resolve_strategy(strategy))
    return dict(os.environ)


def test_inspect_of_a_verified_holdem_file_imports_no_numba(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``acpc-strategy inspect`` of the bundled hold'em file (figures from the manifest)
    needs no kernel once its table is verified and its tree cached (the first run)."""
    env = _filled_cache(tmp_path, monkeypatch)
    result = _run(_WRAP, "strategies.cli", "inspect", f"agent/data/strategies/{HOLDEM}", env=env)
    assert result["status"] == 0, result
    assert result["numba"] is False, result


def first_decisions(policy: Policy) -> dict[str, object]:
    """Preflop decisions of a few hands until one is not a fold, then the opponent calls or
    checks to our flop decision, which is made too; what was played, and whether numba was
    loaded at the preflop decisions."""
    game = load_game(NL2)
    board = tuple(parse_cards("Qh9h2s4c5d"))
    played = []
    for hand, cards in enumerate(("AhKh", "AcAd", "KcKd", "JsTs", "8c8s", "AsQs")):
        state = BettingState.initial(game)
        me = state.player
        mine, other = tuple(parse_cards(cards)), tuple(parse_cards("7c2d"))
        hole = (mine, other) if me == 0 else (other, mine)
        preflop = policy.act(view_of(me, hand, state, hole, board))
        played.append(str(preflop))
        state = state.apply(preflop)
        while not state.finished and (state.round == 0 or state.player != me):
            state = state.apply(CALL)
        if not state.finished:
            break
    numba_at_preflop = "numba" in sys.modules
    assert state.round == 1 and not state.finished, state.betting
    flop = policy.act(view_of(me, hand, state, hole, board))
    return {"preflop": played, "flop": str(flop), "numba_at_preflop": numba_at_preflop,
            "numba_at_flop": "numba" in sys.modules,
            "fallbacks": getattr(policy, "stats", None).off_tree_decisions}  # type: ignore[union-attr]


_FIRST_DECISIONS = textwrap.dedent("""
    import json, sys
    from agent.acpc.gamefiles import load_game
    from agent.agents import make_policy
    from tests.agent.test_startup import NL2, first_decisions
    policy = make_policy(sys.argv[1], load_game(NL2), seed=5, defer_kernels=True,
                         purify="full")
    print(json.dumps(first_decisions(policy)))
""")


@pytest.mark.parametrize("strategy", [HOLDEM, HOLDEM_PA])
def test_first_decision_before_numba(strategy: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With the tree and the verified record cached (as a first run leaves them), the
    preflop decisions come from the deferred abstraction without numba; the flop decision
    loads the kernels; all play what the eagerly built abstraction plays. Both bundled
    card kinds: E[HS^2] and potential-aware."""
    from agent.agents import make_policy

    env = _filled_cache(tmp_path, monkeypatch, strategy)
    deferred = _run(_FIRST_DECISIONS, strategy, env=env)
    assert deferred["numba_at_preflop"] is False, deferred
    assert deferred["numba_at_flop"] is True and deferred["fallbacks"] == 0, deferred
    eager = first_decisions(make_policy(strategy, load_game(NL2), seed=5, purify="full"))
    assert (deferred["preflop"], deferred["flop"]) == (eager["preflop"], eager["flop"])


def test_deferred_potential_aware_cards_equal_the_real_ones(nl2: Game) -> None:
    from agent.abstraction.holdem_pa import PotentialAwareCards
    from agent.agents import resolve_strategy
    from agent.strategy.fileformat import read_header

    spec = read_header(resolve_strategy(HOLDEM_PA))[0]["cards"]
    real = PotentialAwareCards.from_spec(nl2, spec)
    deferred = deferred_card_abstraction(nl2, spec)
    assert isinstance(deferred, DeferredCards) and not deferred.ready
    assert deferred.buckets == real.buckets
    for hole in itertools.combinations(range(52), 2):  # every hole pair, before building
        assert deferred.bucket(0, hole, []) == real.bucket(0, hole, [])
    assert not deferred.ready
    deferred.start()
    rng = random.Random(4)
    for _ in range(30):
        cards = rng.sample(range(52), 7)
        for round_, n in ((1, 3), (2, 4), (3, 5)):
            assert deferred.bucket(round_, cards[:2], cards[2:2 + n]) == real.bucket(
                round_, cards[:2], cards[2:2 + n])
    assert deferred.ready and deferred.clusters == real.clusters
    # the whole spec is checked before anything is deferred
    for key, value, match in (("buckets", [169, 50, 50, 49], "buckets"),
                              ("recall", "partial", "recall"),
                              ("river_thresholds", [5] + [3] * 48, "sorted"),
                              ("flop", {**spec["flop"], "sha256": "0" * 64}, "sha256")):
        with pytest.raises(AbstractionError, match=match):
            deferred_card_abstraction(nl2, {**spec, key: value})


def test_potential_aware_kernels_are_listed_for_a_potential_aware_file(nl2: Game) -> None:
    from agent.abstraction.holdem_pa import DECISION_KERNELS
    from agent.agents import policy_kernels

    assert set(DECISION_KERNELS) <= set(policy_kernels(HOLDEM_PA, nl2))
    assert not set(DECISION_KERNELS) & set(policy_kernels(HOLDEM, nl2))


def test_deferred_cards_equal_the_real_ones(nl2: Game) -> None:
    from agent.abstraction.holdem_buckets import HoldemCards
    from agent.agents import resolve_strategy
    from agent.strategy.fileformat import read_header

    spec = read_header(resolve_strategy(HOLDEM))[0]["cards"]
    real = HoldemCards.from_spec(nl2, spec)
    deferred = deferred_card_abstraction(nl2, spec)
    assert isinstance(deferred, DeferredCards) and not deferred.ready
    assert deferred.buckets == real.buckets and deferred.spec == spec
    rng = random.Random(3)
    for _ in range(40):  # preflop first: answered without building
        hole = rng.sample(range(52), 2)
        assert deferred.bucket(0, hole, []) == real.bucket(0, hole, [])
    assert not deferred.ready
    deferred.start()
    for _ in range(30):
        cards = rng.sample(range(52), 7)
        for round_, n in ((1, 3), (2, 4), (3, 5)):
            assert deferred.bucket(round_, cards[:2], cards[2:2 + n]) == real.bucket(
                round_, cards[:2], cards[2:2 + n])
    assert deferred.ready and deferred.thresholds == real.thresholds
    with pytest.raises(AbstractionError, match="distinct"):
        deferred.bucket(0, [5, 5], [])


def test_deferred_cards_check_the_spec_at_once_and_report_a_failed_build(nl2: Game) -> None:
    with pytest.raises(AbstractionError, match="169 preflop buckets"):
        deferred_card_abstraction(nl2, {"kind": "holdem", "buckets": [10, 2, 2, 2],
                                        "metric": "ehs2", "thresholds": [[0.5]] * 3})
    assert deferred_card_abstraction(nl2, {"kind": "lossless", "buckets": [1]}) is None

    def broken() -> DeferredCards:
        raise OSError("no kernels here")

    cards = DeferredCards({"kind": "x"}, (169, 2), lambda h, b: 7, broken)
    assert cards.bucket(0, [0, 1], []) == 7
    cards.start()
    with pytest.raises(OSError, match="no kernels here"):
        cards.bucket(1, [0, 1], [2, 3, 4])


def test_kernel_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))
    assert not kernels_known_warm()
    mark_kernels_warm()
    assert kernels_known_warm() and stamp_path().is_file()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert not kernels_known_warm()  # another numba cache: not known


def test_agent_process_answers_preflop_and_flop(nl2: Game, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The real acpc-agent, with the kernels stamped warm, answers a preflop and then a flop
    state of one hand (the flop waits for the background load). Without the stamp it loads
    them before connecting, as before (tests/agent/test_agent_live.py plays that way)."""
    env = _filled_cache(tmp_path, monkeypatch)
    mark_kernels_warm()
    state = BettingState.initial(nl2)
    me = state.player
    mine, other = tuple(parse_cards("AcAd")), tuple(parse_cards("7c2d"))
    hole = (mine, other) if me == 0 else (other, mine)
    board = tuple(parse_cards("Qh9h2s4c5d"))
    pre = view_of(me, 0, state, hole, board)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(120)
    port = listener.getsockname()[1]
    agent = Path(sys.executable).with_name("acpc-agent")
    proc = subprocess.Popen([str(agent), NL2, "127.0.0.1", str(port), "--strategy",
                             HOLDEM, "--seed", "1"], env=env, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL)
    try:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(120)
            f = conn.makefile("rwb")
            assert f.readline().startswith(b"VERSION:2.0.0")
            f.write((format_matchstate(pre) + "\r\n").encode())
            f.flush()
            reply = f.readline().decode().strip()
            assert reply.startswith(format_matchstate(pre) + ":"), reply
            # our action, then the opponent calls or checks until the flop is ours to act
            after = state.apply(parse_action(reply.rsplit(":", 1)[1], nl2))
            while not after.finished and (after.round == 0 or after.player != me):
                after = after.apply(CALL)
            assert not after.finished, after.betting  # aces do not fold preflop
            if not after.finished:
                flop = view_of(me, 0, after, hole, board)
                f.write((format_matchstate(flop) + "\r\n").encode())
                f.flush()
                reply = f.readline().decode().strip()
                assert reply.startswith(format_matchstate(flop) + ":"), reply
                after.apply(parse_action(reply.rsplit(":", 1)[1], nl2))  # legal
            f.close()
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        listener.close()


def test_a_background_load_is_not_charged_to_the_time_guard(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28 (same seed, same result): the first postflop decision of an agent whose
    hold'em kernels load in the background waited for the load inside its time guard's
    clock and, past 1 s, checked or called instead of playing the strategy, so a loaded
    machine changed the results. The wait is now off the clock: a load that takes 10 s (on
    a stubbed clock) costs the decision nothing and it plays what the eagerly built
    abstraction plays."""
    import agent.policy
    from agent.agents import make_policy

    game = load_game(NL2)
    now = [0.0]
    monkeypatch.setattr(agent.policy.time, "perf_counter", lambda: now[0])
    policy = make_policy(HOLDEM, game, seed=5, defer_kernels=True, purify="full",
                         time_guard=1.0)
    cards = policy.loaded.cards  # type: ignore[attr-defined]
    assert isinstance(cards, DeferredCards) and not cards.ready
    build = cards._build

    def slow_build() -> object:
        now[0] += 10.0  # the load takes ten seconds on the policy's clock
        return build()

    monkeypatch.setattr(cards, "_build", slow_build)
    deferred = first_decisions(policy)
    assert cards.ready and now[0] == 10.0
    assert policy.stats.timeouts == 0, deferred  # type: ignore[attr-defined]
    eager = first_decisions(make_policy(HOLDEM, game, seed=5, purify="full"))
    assert (deferred["preflop"], deferred["flop"]) == (eager["preflop"], eager["flop"])
