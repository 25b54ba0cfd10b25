"""Sampled LBR (issue 17, item 3): real hands against the real agent.

Checks (the kernels' no-JIT run is in ``test_lbr_cards.py``): the batched buckets and
equities equal the agent's own function and a brute-force evaluator; the range LBR keeps
equals a slow oracle that asks the real policy object hole by hole (enumerating its
private draws through a scripted random generator and its trace); against
``builtin:fold`` LBR wins exactly the blinds, against ``builtin:call`` at least a bound
derived from the check-down argument; in no-limit Leduc the sampled value agrees with the
exact LBR of :mod:`strategies.measure.lbr` and stays below the exact best response.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from functools import cache
from typing import Any

import numpy as np
import pytest

from agent.abstraction.holdem_buckets import hand_strength_moments
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState, parse_betting
from agent.acpc.dealing import Deal
from agent.acpc.evaluator import rank_hand
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import view_of
from agent.builtin import EquityPolicy
from agent.policy import StrategyPolicy
from agent.strategy.purification import parse_purification
from strategies.measure.lbr import lbr_value
from strategies.measure.lbr_cards import all_holes, completions, equities, hole_buckets
from strategies.measure.sampled_lbr import (
    CHUNK_DEALS,
    BucketCache,
    ChunkPlayer,
    HandView,
    LbrConfig,
    LbrSettings,
    candidate_raises,
    play_hand,
    random_prob,
    summarize,
    total,
)
from strategies.measure.translation.full_br import AgentLab
from strategies.measure.translation.lab import load_leduc
from tests.support import ROOT

HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
LEDUC = "leduc.nolimit.2p.game"


@cache
def player(spec: str, game: str, purify: str | None = None, preflop: str = "call",
           fractions: tuple[float, ...] = (0.5, 1.0, 2.0)) -> ChunkPlayer:
    return ChunkPlayer(LbrConfig(spec, game, purify=purify, preflop=preflop,
                                 fractions=fractions))


# --------------------------------------------------------------------------- cards


def test_hole_buckets_equal_the_agents_buckets() -> None:
    loaded = player("holdem.nolimit.2p.strat", HOLDEM).base.loaded
    rng = random.Random(3)
    for round_, n_board in ((0, 0), (1, 3), (2, 4), (3, 5)):
        board = rng.sample(range(52), n_board)
        holes = [h for h in itertools.combinations(range(52), 2) if not set(h) & set(board)]
        some = np.array(rng.sample(holes, 40), dtype=np.int64)
        got = hole_buckets(loaded.cards, round_, some, board)
        for hole, bucket in zip(some.tolist(), got.tolist(), strict=True):
            assert loaded.cards.bucket(round_, hole[::-1], board) == bucket, (round_, hole)


def test_equities_equal_brute_force() -> None:
    game = load_game(HOLDEM)
    rng = random.Random(5)
    cards = rng.sample(range(52), 6)
    hole, board = cards[:2], cards[2:]
    others = np.array([h for h in itertools.combinations(range(52), 2)
                       if not set(h) & set(cards)][::97], dtype=np.int64)
    boards = completions(game, hole, board, np.random.default_rng(0))
    assert boards.shape == (46, 1)
    got = equities(game, hole, board, others, boards)
    for other, value in zip(others.tolist(), got.tolist(), strict=True):
        score = count = 0
        for river in range(52):
            if river in cards or river in other:
                continue
            ours, theirs = rank_hand([*hole, *board, river]), rank_hand([*other, *board, river])
            score += 2 if ours > theirs else 1 if ours == theirs else 0
            count += 1
        assert value == pytest.approx(score / (2 * count), abs=1e-12)


def test_bucket_cache_equals_the_agents_buckets_under_suit_relabelling() -> None:
    loaded = player("holdem.nolimit.2p.strat", HOLDEM).base.loaded
    holes = all_holes(load_game(HOLDEM))
    cache = BucketCache(holes)
    rng = random.Random(8)
    for round_, n_board in ((1, 3), (2, 4), (3, 5)):
        board = rng.sample(range(52), n_board)
        perm = rng.sample(range(4), 4)
        for b in (board, [(c // 4) * 4 + perm[c % 4] for c in board]):  # same canonical key
            which = np.array(rng.sample([i for i, h in enumerate(holes.tolist())
                                         if not set(h) & set(b)], 30), dtype=np.int64)
            got = cache.buckets(loaded.cards, round_, tuple(b), holes, which)
            for i, bucket in zip(which.tolist(), got.tolist(), strict=True):
                assert loaded.cards.bucket(round_, holes[i].tolist(), b) == bucket
    assert len(cache._boards) == 3


# --------------------------------------------------------------------------- oracle


class _Script:
    """A random generator that returns given values (then 0.0): the agent's draws."""

    def __init__(self, values: list[float]) -> None:
        self.values = values
        self.used = 0

    def random(self) -> float:
        value = self.values[self.used] if self.used < len(self.values) else 0.0
        self.used += 1
        return value


def _history(game: Any, betting: str) -> list[tuple[BettingState, Action]]:
    final = parse_betting(game, betting)
    state = BettingState.initial(game)
    out = []
    for action in (a for rnd in final.actions for a in rnd):
        out.append((state, action))
        state = state.apply(action)
    return out


def oracle_weight(base: StrategyPolicy, agent: int, deal: Deal,
                  history: list[tuple[BettingState, Action]]) -> float:
    """P(the agent's actions in ``history`` | its cards in ``deal``), asking fresh policy
    objects with every combination of private draws (translation: u below or above f;
    decision: u inside each action's share of the purified row) and adding the
    probabilities of the combinations that replay the agent's actions."""
    decisions = [(s, a) for s, a in history if s.player == agent]

    def run(prefix: list[float]) -> tuple[list[dict[str, Any]], list[Action]]:
        records: list[dict[str, Any]] = []
        policy = StrategyPolicy(base.loaded, base.mapping, base.purification,
                                trace=records.append, sizes_in=base.sizes_in)
        policy.rng = _Script(prefix)  # type: ignore[assignment]
        played = [policy.act(view_of(agent, 0, s, deal.hole, deal.board))
                  for s, _ in decisions]
        return records, played

    def explore(prefix: list[float], prob: float) -> float:
        records, played = run(prefix)
        draws: list[tuple[str, Any]] = []
        for record, (act, (_, seen)) in zip(records, zip(played, decisions, strict=True),
                                            strict=True):
            draws += [("t", t["f"]) for t in record["translations"] if "x" in t]
            if "draw" in record:
                draws.append(("d", record["purified"]))
            if len(draws) <= len(prefix) and act != seen:
                return 0.0  # a decision fully drawn already that does not replay
        if len(draws) <= len(prefix):
            return prob
        kind, what = draws[len(prefix)]
        total = 0.0
        if kind == "t":
            f = float(what)
            if f > 0:
                total += explore([*prefix, 0.0], prob * f)
            if f < 1:
                total += explore([*prefix, (1 + f) / 2], prob * (1 - f))
            return total
        row = [float(p) for p in what]
        mass = sum(row)
        before = 0.0
        for p in row:
            if p > 0:
                total += explore([*prefix, (before + p / 2) / mass], prob * p / mass)
            before += p
        return total

    return explore([], 1.0)


def _check_ranges(chunk: ChunkPlayer, deals: int, seed: int, holes_per_decision: int) -> int:
    """Play hands and compare the model's range before every LBR decision with the oracle
    (a sample of holes per decision, always the agent's own); the number of checks."""
    game = chunk.game
    holes = chunk.holes
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    from agent.acpc.dealing import deal_hands

    dealer = deal_hands(game, seed)
    checked = 0
    for number in range(deals):
        deal = next(dealer)
        for position in (0, 1):
            policy = chunk.policy(seed + number)
            record = play_hand(game, deal, position, number, policy, chunk.model,
                               chunk.settings, rng, holes, keep_ranges=True)
            agent = 1 - position
            history = _history(game, record.betting)
            lbr_points = [i for i, (s, _) in enumerate(history) if s.player == position]
            assert len(lbr_points) == len(record.ranges)
            for point, weights in zip(lbr_points, record.ranges, strict=True):
                own = tuple(sorted(deal.hole[agent]))
                index = [i for i, h in enumerate(holes.tolist()) if tuple(h) == own]
                others = pick.sample(range(len(holes)), min(holes_per_decision, len(holes)))
                for i in sorted(set(index + others)):
                    hole = tuple(int(c) for c in holes[i])
                    if set(hole) & (set(deal.hole[position]) | set(
                            deal.board[: game.board_cards_through(history[point][0].round)])):
                        assert weights[i] == 0.0
                        continue
                    cards = tuple(hole if p == agent else deal.hole[p] for p in range(2))
                    want = oracle_weight(policy, agent, Deal(cards, deal.board),
                                         history[:point])
                    assert weights[i] == pytest.approx(want, rel=1e-4, abs=1e-6), \
                        (record.betting, point, hole)
                    checked += 1
    return checked


def test_range_equals_the_oracle_in_leduc_mixed() -> None:
    chunk = player("leduc.nolimit.2p.fcpa.strat", LEDUC, purify="none", preflop="best")
    assert _check_ranges(chunk, deals=12, seed=7, holes_per_decision=6) > 50


def test_range_equals_the_oracle_in_holdem() -> None:
    chunk = player("holdem.nolimit.2p.strat", HOLDEM, preflop="best")
    assert _check_ranges(chunk, deals=2, seed=11, holes_per_decision=12) > 20


# --------------------------------------------------------------------------- weak agents


def test_lbr_wins_exactly_the_blinds_from_the_folder() -> None:
    chunk = player("builtin:fold", HOLDEM)
    rows = chunk.play(0) + chunk.play(1)
    # position 0 posts the big blind (100): the folder, first to act preflop, folds its 50;
    # position 1 (small blind) calls, the folder checks, LBR bets postflop and it folds
    assert {(int(p), v) for _, p, v in rows} == {(0, 50.0), (1, 100.0)}
    summary = summarize(rows, 100)
    assert summary.mbb == 750.0


def test_lbr_exploits_the_caller_at_least_by_the_check_down_bound() -> None:
    """Against an agent that always calls, LBR's estimates are exact for its last
    decision and every later choice is at least as good as checking down, so its value is
    at least, per deal, the better of checking down and moving all-in at its first flop
    decision: ``max((2e - 1) * 100, (2e - 1) * 20000)`` with ``e`` its exact flop equity
    against a random hand (both players have 100 in; the caller reveals nothing). The
    bound is computed from each played deal's cards (exact enumeration)."""
    chunk = player("builtin:call", HOLDEM)
    rows: list[list[float]] = []
    bounds: list[float] = []
    from agent.acpc.dealing import deal_hands

    for c in range(3):
        rows += chunk.play(c)
    for c in range(3):
        from strategies.measure.sampled_lbr import _derived

        dealer = deal_hands(chunk.game, _derived(0, c, 0))
        for _ in range(CHUNK_DEALS):
            deal = next(dealer)
            for position in (0, 1):
                e = hand_strength_moments(list(deal.hole[position]), list(deal.board[:3]),
                                          flop_rivers_per_turn=46)[0]
                bounds.append(max((2 * e - 1) * 100, (2 * e - 1) * 20000))
    values = np.array([v for *_, v in rows])
    diff = values - np.array(bounds)
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert diff.mean() > -3 * se
    assert values.mean() > 10 * 100  # more than 10,000 mbb/h: the obvious exploit


# --------------------------------------------------------------------------- Leduc


def test_candidate_raises_match_the_exact_lbr() -> None:
    game = load_game(LEDUC)
    state = BettingState.initial(game)
    lo, hi = state.raise_bounds() or (0, 0)
    got = candidate_raises(state, (0.5, 1.0))
    assert got[-1] == hi and all(lo <= t <= hi for t in got)
    assert got == sorted(set(got))


def test_sampled_lbr_agrees_with_exact_lbr_in_leduc() -> None:
    strategy = load_leduc("fcpa")
    lab = AgentLab(strategy)
    mapping = get_mapping(strategy.default_mapping)
    purification = parse_purification(strategy.default_purification)
    fractions = (0.5, 1.0)
    exact = [lbr_value(lab.real, lab.behaviour(1 - q, mapping, purification), q, fractions)
             for q in (0, 1)]
    exact_lbr = sum(r.value for r in exact) / 2
    exact_br = sum(r.best_response for r in exact) / 2
    chunk = player("leduc.nolimit.2p.fcpa.strat", LEDUC, preflop="best", fractions=fractions)
    rows: list[list[float]] = []
    for c in range(200):
        rows += chunk.play(c)
    s = summarize(rows, 1)
    assert abs(s.chips - exact_lbr) <= 1.5 * s.half_width, (s, exact_lbr)
    assert s.chips <= exact_br + s.half_width, (s, exact_br)


def test_settings_defaults() -> None:
    settings = LbrSettings()
    assert settings == LbrSettings.legacy((0.5, 1.0, 2.0), "call")
    assert not settings.menu(0).bets and settings.menu(3).fractions == (0.5, 1.0, 2.0)
    assert all_holes(load_game(HOLDEM)).shape == (1326, 2)


def test_command_plays_and_writes_every_hand(tmp_path: Any) -> None:
    out = tmp_path / "lbr.json"
    done = subprocess.run([sys.executable, "-m", "strategies.cli", "lbr", "builtin:fold",
                           "--hands", "40", "--json", str(out)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "LBR wins 750.0 +- 0.0 mbb/h" in done.stdout
    data = json.loads(out.read_text())
    assert data["hands"] == 40 and len(data["values"]) == 40 and data["mbb_per_hand"] == 750


def test_random_agent_probabilities_sum_to_one() -> None:
    game = load_game(HOLDEM)
    state = BettingState.initial(game)
    for action in (Action(ActionKind.CALL), Action(ActionKind.RAISE, 300)):
        lo, hi = state.raise_bounds() or (0, 0)
        everything = [FOLD, CALL] + [Action(ActionKind.RAISE, t) for t in range(lo, hi + 1)]
        assert sum(random_prob(state, a) for a in everything) == pytest.approx(1.0)
        state = state.apply(action)


def test_equity_agent_range_is_its_raising_hands() -> None:
    """Preflop, builtin:equity raises exactly the holes whose equity reaches RAISE_AT: the
    range after its raise is those holes (asked through its act, hole by hole)."""
    chunk = player("builtin:equity", HOLDEM)
    game = chunk.game
    deal = Deal(((0, 1), (2, 3)), (4, 5, 6, 7, 8))
    view = HandView(game, chunk.holes, 1, 0, (0, 1), deal.board)
    state = BettingState.initial(game)  # position 1 (the agent) acts first preflop
    hyps = {0: view.possible(0).astype(np.float64)}
    raised = chunk.model.update(view, hyps, state, Action(ActionKind.RAISE, 300))
    weights = total(raised, chunk.holes.shape[0])
    policy = EquityPolicy(game)
    for i, hole in enumerate(chunk.holes.tolist()):
        if set(hole) & {0, 1}:
            assert weights[i] == 0
            continue
        assert weights[i] == float(policy.equity(hole, []) >= EquityPolicy.RAISE_AT), hole
