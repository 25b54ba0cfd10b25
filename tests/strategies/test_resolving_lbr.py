"""Sampled LBR's model of the re-solving agent (strategies/measure/resolving_lbr.py).

No-limit Leduc (every round re-solved), a few hands with few iterations. The oracle is a
second, independent re-solver of the same blueprint that follows each hand's history on
its own: the range LBR keeps must be, hole by hole, the prior times the probability of
every action the agent took under that re-solver; the fold weights LBR gives each of its
candidate raises must be the range times the probability that the agent folds after the
raise under it. And the model's counters must show that both kinds of decision were met.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agent.acpc.betting import FOLD, Action, ActionKind, BettingState, parse_betting
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import UsageError
from agent.acpc.matchstate import MatchState
from agent.resolve import HandResolver, ResolveConfig, Resolver
from strategies.measure.resolving_lbr import ResolvingChunkPlayer, ResolvingModel
from strategies.measure.sampled_lbr import HandView, Hyps, LbrConfig, LbrSettings, play_hand, total

LEDUC = "leduc.nolimit.2p.game"
STRAT = "leduc.nolimit.2p.fcpa.strat"
CONFIG = ResolveConfig(mode="round", iterations=10)


class Spy:
    """The agent, recording every state it acted at and its action."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.log: list[tuple[BettingState, Action]] = []

    def act(self, ms: MatchState) -> Action:
        action: Action = self.policy.act(ms)
        self.log.append((ms.state, action))
        return action


def _oracle(chunk: ResolvingChunkPlayer, seat: int, log: list[tuple[BettingState, Action]],
            board: tuple[int, ...], upto: str) -> HandResolver:
    """An independent re-solver that has followed the agent's decisions before ``upto``."""
    game = chunk.game
    resolver = Resolver(chunk.model.loaded.strategy, CONFIG, mapping=chunk.model.mapping,
                        purification=chunk.model.purification, sizes_in=chunk.model.sizes_in)
    hand = resolver.new_hand(seat)
    for state, _ in log:
        if len(state.betting) < len(upto) and upto.startswith(state.betting):
            hand.decide(state, board[: game.board_cards_through(state.round)])
    return hand


def test_ranges_and_fold_weights_are_the_agents_own() -> None:
    chunk = ResolvingChunkPlayer(LbrConfig(STRAT, LEDUC, seed=4), CONFIG)
    model = chunk.resolving_model
    assert isinstance(model, ResolvingModel)
    policy = chunk.policy(11)
    spy = Spy(policy)
    settings = LbrSettings.legacy((1.0,), "best")  # LBR bets pot and all-in in every round
    weighed: list[tuple[BettingState, list[int], Any, Any]] = []
    original = model.raise_fold_weights

    def recording(view: HandView, hyps: Hyps, state: BettingState, tos: Any,
                  which: Any) -> Any:
        out = original(view, hyps, state, tos, which)
        weighed.append((state, list(tos), total(hyps, view.holes.shape[0])[which].copy(),
                        (which.copy(), out.copy())))
        return out

    model.raise_fold_weights = recording  # type: ignore[method-assign]
    rng = np.random.default_rng(5)
    dealer = deal_hands(chunk.game, 17)
    checked_ranges = checked_folds = 0
    for i in range(3):
        deal = next(dealer)
        for lbr in (0, 1):
            spy.log.clear()
            weighed.clear()
            record = play_hand(chunk.game, deal, lbr, 2 * i + lbr, spy, model, settings, rng,
                               chunk.holes, keep_ranges=True, fast=True)
            agent = 1 - lbr
            board = tuple(deal.board)
            holes = chunk.holes
            possible_cards = set(deal.hole[lbr])
            # LBR's decisions in order: the states before each of its actions
            lbr_states: list[BettingState] = []
            st = BettingState.initial(chunk.game)
            for rnd in parse_betting(chunk.game, record.betting).actions:
                for a in rnd:
                    if st.player == lbr:
                        lbr_states.append(st)
                    st = st.apply(a)
            theirs = list(weighed)
            assert len(lbr_states) == len(record.ranges)
            for st, rng_w in zip(lbr_states, record.ranges, strict=True):
                oracle = _oracle(chunk, agent, spy.log, board, st.betting)
                want = np.zeros(holes.shape[0])
                visible = set(board[: chunk.game.board_cards_through(st.round)])
                for h, hole in enumerate(holes.tolist()):
                    if set(hole) & (possible_cards | visible):
                        continue
                    p = 1.0
                    for s, a in spy.log:
                        if len(s.betting) < len(st.betting) and st.betting.startswith(s.betting):
                            d = oracle.own[s.betting]
                            p *= float(d[1][oracle.resolver.hands.find(hole),
                                            d[0].index(a)])
                    want[h] = p
                np.testing.assert_allclose(rng_w, want, rtol=1e-9, atol=1e-12)
                checked_ranges += 1
            for st, tos, w, (which, out) in theirs:
                if not model.policy.resolver.resolves(st.round):
                    continue
                oracle = _oracle(chunk, agent, spy.log, board, st.betting)
                for j, to in enumerate(tos):
                    after = st.apply(Action(ActionKind.RAISE, to))
                    if after.finished or after.player != agent or not after.can_fold():
                        assert not out[j].any()
                        continue
                    d = oracle.copy().decide(after, board[: chunk.game.board_cards_through(
                        after.round)])
                    fold = d.probs[[oracle.resolver.hands.find(h)
                                    for h in holes[which].tolist()], d.actions.index(FOLD)]
                    np.testing.assert_allclose(out[j], w * fold, rtol=1e-9, atol=1e-12)
                    checked_folds += 1
    assert checked_ranges >= 6 and checked_folds >= 4
    assert model.stats.played > 0 and model.stats.hypothetical > 0
    assert model.stats.hypothetical_resolves > 0  # raises off the plan: nested re-solves


def test_a_time_budget_is_refused() -> None:
    with pytest.raises(UsageError, match="time budget"):
        ResolvingChunkPlayer(LbrConfig(STRAT, LEDUC, seed=4),
                             ResolveConfig(mode="round", iterations=10, seconds=1.0))


def test_command_resolve_and_its_conflicts(tmp_path: Any,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from strategies.cli import main

    out_json = tmp_path / "r.json"
    assert main(["lbr", STRAT, "--setting", "fc", "--hands", "20", "--seed", "1",
                 "--resolve", "round", "--resolve-iterations", "5",
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "re-solving (round, reach-maxmargin, 5 iterations)" in out
    assert "re-solving agent: " in out
    import json

    data = json.loads(out_json.read_text())
    assert data["resolve"]["iterations"] == 5 and data["model"]["played"] > 0
    # depth-limited re-solves (the agent's round 0 re-solved with multi-valued leaves)
    assert main(["lbr", STRAT, "--setting", "fc", "--hands", "10", "--seed", "1",
                 "--resolve", "always", "--resolve-iterations", "5", "--resolve-depth", "1",
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "re-solving (always, reach-maxmargin, 5 iterations, depth 1, multi leaves)" in out
    data = json.loads(out_json.read_text())
    assert (data["resolve"]["depth"], data["resolve"]["leaf"]) == (1, "multi")
    for argv, message in (
            (["lbr", "builtin:call", "--resolve", "round"], "expected a strategy file"),
            (["lbr", STRAT, "--gadgets", "unsafe"], "expected --resolve with --gadgets"),
            (["lbr", STRAT, "--resolve-depth", "1"], "expected --resolve with --resolve-depth"),
            (["lbr", STRAT, "--resolve", "round", "--resolve-leaf", "multi"],
             "expected --resolve-leaf only with --resolve-depth N"),
            (["lbr", STRAT, "--resolve", "round", "--resolve-depth", "1", "--resolve-leaf",
              "many"], "expected a leaf kind (blueprint, multi), got 'many'")):
        assert main(argv) != 0
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--resolve", "sometimes", "expected a re-solve mode"),
    ("--gadgets", "safe", "gadget")])
def test_bad_resolve_values_are_one_line(flag: str, value: str, message: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from strategies.cli import main

    argv = ["lbr", STRAT, "--hands", "20", flag, value]
    if flag != "--resolve":
        argv += ["--resolve", "round"]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
