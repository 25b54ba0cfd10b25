from __future__ import annotations

import os
import random
import zlib
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import (
    PRESETS,
    BettingAbstraction,
    build_tree,
    parse_betting_abstraction,
)
from agent.abstraction.buckets import BlindCards, CardAbstraction, LosslessCards
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState, parse_betting
from agent.acpc.dealing import deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState, view_of
from agent.decision import realise
from agent.policy import LoadedStrategy, StrategyPolicy
from agent.strategy.fileformat import dump_strategy, load_strategy, table_layout
from agent.strategy.purification import parse_purification
from tests.support import random_playout


def make_strategy(
    tmp_path: Path, game: Game, betting: BettingAbstraction, cards: CardAbstraction,
    kind: str = "uniform", seed: int = 0, name: str = "s.strat",
) -> LoadedStrategy:
    tree = build_tree(game, betting)
    layout = table_layout(tree, cards.buckets)
    rng = np.random.default_rng(seed)
    table = np.empty(layout.total)
    for node in tree.decision_nodes:
        k = len(node.actions)
        n = layout.rows[node.id]
        if kind == "uniform":
            rows = np.full((n, k), 1.0 / k)
        elif kind == "random":
            rows = rng.random((n, k))
            rows /= rows.sum(axis=1, keepdims=True)
        else:  # a pure strategy: always the first or always the last (largest) action
            rows = np.zeros((n, k))
            rows[:, 0 if kind == "first" else -1] = 1.0
        table[layout.offsets[node.id] : layout.offsets[node.id] + n * k] = rows.ravel()
    path = dump_strategy(tmp_path / name, game, betting, cards.spec, table, tree=tree)
    return LoadedStrategy(load_strategy(path, game, tree=tree), cards)


def ms_for(game: Game, betting: str, position: int, hand: int = 0, seed: int = 1) -> MatchState:
    deal = next(deal_hands(game, seed))
    return view_of(position, hand, parse_betting(game, betting), deal.hole, deal.board)


def test_realise_rules(nl2: Game) -> None:
    s = parse_betting(nl2, "cc/")  # pot 200, nobody has bet: a fold becomes a check
    assert realise(s, ActionKind.FOLD, -2.0) == CALL
    assert realise(s, ActionKind.RAISE, 1.0) == Action(ActionKind.RAISE, 300)
    assert realise(s, ActionKind.RAISE, -1.0) == Action(ActionKind.RAISE, 20000)
    assert realise(s, ActionKind.RAISE, 0.1) == Action(ActionKind.RAISE, 200)  # min bet
    s = parse_betting(nl2, "r300")
    assert realise(s, ActionKind.FOLD, -2.0) == FOLD
    assert realise(s, ActionKind.RAISE, 1.0) == Action(ActionKind.RAISE, 900)
    s = parse_betting(nl2, "r20000")
    assert realise(s, ActionKind.RAISE, 1.0) == CALL  # no raise possible


def test_translation_is_recorded_and_measured_in_pot_fractions(
    tmp_path: Path, nl2: Game
) -> None:
    loaded = make_strategy(tmp_path, nl2, PRESETS["fcpa"], BlindCards(nl2))
    records: list[dict[str, object]] = []
    policy = StrategyPolicy(loaded, get_mapping("rand-pshar"), parse_purification("none"),
                            seed=1, mapping_name="rand-pshar", trace=records.append)
    # Opponent (small blind) opens to 250: x = 150 / 200 = 0.75, between call and pot.
    ms = ms_for(nl2, "r250", 0)
    action = policy.act(ms)
    assert ms.state.is_legal(action)
    (t,) = records[-1]["translations"]  # type: ignore[misc]
    assert t["x"] == 0.75 and t["A"] == 0.0 and t["B"] == 1.0
    assert t["f"] == pytest.approx((1 - 0.75) * 1 / (1 * 1.75))
    assert t["choice"] in ("c", "r300")
    # read as a limp, the big blind may check or raise; read as a pot raise, also fold
    want = 3 if t["choice"] == "c" else 4
    assert records[-1]["bucket"] == 0 and len(records[-1]["raw"]) == want  # type: ignore[arg-type]


def test_same_seed_same_actions(tmp_path: Path, nl2: Game) -> None:
    loaded = make_strategy(tmp_path, nl2, PRESETS["fcpa3"], BlindCards(nl2), kind="random")
    states = []
    rng = random.Random(5)
    for hand in range(200):
        final, _ = random_playout(nl2, rng)
        deal = next(deal_hands(nl2, hand))
        s = BettingState.initial(nl2)
        for a in [a for rnd in final.actions for a in rnd]:
            states.append(view_of(s.player, hand, s, deal.hole, deal.board))
            s = s.apply(a)

    def run(seed: int) -> list[Action]:
        policy = StrategyPolicy(loaded, get_mapping("rand-pshar"), parse_purification("none"),
                                seed=seed)
        return [policy.act(ms) for ms in states]

    first = run(7)
    assert first == run(7)
    assert first != run(8)
    for ms, action in zip(states, first, strict=True):
        assert ms.state.is_legal(action)


def test_full_purification_plays_the_argmax(tmp_path: Path, leduc: Game) -> None:
    loaded = make_strategy(tmp_path, leduc, PRESETS["fcpa"], LosslessCards(leduc),
                           kind="random", seed=4)
    policy = StrategyPolicy(loaded, get_mapping("rand-pshar"), parse_purification("full"),
                            seed=0)
    ms = ms_for(leduc, "", 0)
    bucket = loaded.cards.bucket(0, ms.own_cards, ())
    row = loaded.strategy.row(0, bucket)
    best = int(np.argmax(row))
    for _ in range(20):
        action = policy.act(ms_for(leduc, "", 0, hand=_))
        node = loaded.tree.nodes[0]
        assert action == node.actions[best].action or (
            node.actions[best].kind is ActionKind.FOLD and action == CALL
        )


def test_swap_takes_effect_next_hand(tmp_path: Path, leduc: Game) -> None:
    cards = LosslessCards(leduc)
    raise_all = make_strategy(tmp_path, leduc, PRESETS["fcpa"], cards, kind="last", name="a")
    passive = make_strategy(tmp_path, leduc, PRESETS["fcpa"], cards, kind="first", name="b")
    policy = StrategyPolicy(raise_all, get_mapping("rand-pshar"), parse_purification("full"))
    assert policy.act(ms_for(leduc, "", 0, hand=0)).kind is ActionKind.RAISE
    policy.swap(passive)
    assert policy.swap_pending
    # later in the same hand: still the old strategy
    assert policy.act(ms_for(leduc, "rc/", 0, hand=0)).kind is ActionKind.RAISE
    assert policy.loaded is raise_all
    # the next hand plays the new one
    assert policy.act(ms_for(leduc, "", 0, hand=1)) == CALL
    assert not policy.swap_pending and policy.loaded is passive


def test_raise_beyond_the_cap_is_read_as_call(tmp_path: Path, nl2: Game) -> None:
    loaded = make_strategy(tmp_path, nl2, PRESETS["fcpa3"], BlindCards(nl2))
    policy = StrategyPolicy(loaded, get_mapping("det-arith"), parse_purification("none"),
                            seed=3)
    ms = ms_for(nl2, "r300r900r2700r5000", 0)  # 4th raise: the abstraction stops at 3
    action = policy.act(ms)
    assert ms.state.is_legal(action)
    assert policy.stats.raise_cap_fallbacks + policy.stats.off_tree_fallbacks >= 1


def test_abstract_round_ended_waits_then_plays_on(tmp_path: Path, nl2: Game) -> None:
    """A small raise read as a call closes the abstract flop while the real flop goes on:
    the agent calls it, then plays the strategy again on the turn (not check/call to the
    end of the hand)."""
    loaded = make_strategy(tmp_path, nl2, PRESETS["fcpa"], BlindCards(nl2), kind="last")
    records: list[dict[str, object]] = []
    policy = StrategyPolicy(loaded, get_mapping("det-arith"), parse_purification("full"),
                            seed=1, trace=records.append)
    # flop: we (position 0) bet the pot (r300), the opponent raises to 500: x = 200 / 600,
    # read by det-arith as a call, which ends the abstract flop
    ms = ms_for(nl2, "cc/r300r500", 0)
    assert policy.act(ms) == CALL
    assert records[-1]["fallback"] == "abstract round ended: check/call"
    assert policy.stats.waiting_fallbacks == 1
    ms = ms_for(nl2, "cc/r300r500c/", 0)
    action = policy.act(ms)
    assert records[-1]["fallback"] is None
    node = loaded.tree.nodes[records[-1]["node"]]  # type: ignore[index]
    assert node.round == 2 and node.player == 0
    assert action == Action(ActionKind.RAISE, 20000)  # the strategy's all-in, not a check
    assert policy.stats.off_tree_fallbacks == 0


N_RANDOM_STATES = int(os.environ.get("ACPC_POLICY_STATES", "40000"))
"""40,000 states in the suite (1,000,000 took ~190 CPU-s, 250,000 ~110, 100,000 ~30 CPU-s of
a suite that must finish in 10 minutes on 2 cores); ``ACPC_POLICY_STATES=1000000`` runs the
long version."""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game_name", "share"),
    [("holdem.nolimit.2p.reverse_blinds.game", 0.4), ("holdem.nolimit.3p.game", 0.3),
     ("holdem.nolimit.6p.game", 0.3)],
)
def test_policy_never_illegal_over_random_states(
    tmp_path: Path, game_name: str, share: float
) -> None:
    """Random real states (random legal play-outs, every decision point) and random bets
    by the opponents: the policy's action is always legal. :data:`N_RANDOM_STATES` in all."""
    game = load_game(game_name)
    betting = {
        2: PRESETS["fchpa3"],
        3: PRESETS["fcpa3"],
        # six players: pot raises preflop and on the flop only (the tree stays ~10^5 nodes)
        6: parse_betting_abstraction(
            {"name": "fcpa-6p", "fractions": [[[1.0]]], "max_raises": [1, 1, 0, 0]}),
    }[game.num_players]
    loaded = make_strategy(tmp_path, game, betting, BlindCards(game), kind="random")
    mappings = ["rand-pshar", "det-geo", "rand-geo-2", "det-arith"]
    purifications = ["none", "full", "threshold:0.15"]
    policies = [
        StrategyPolicy(loaded, get_mapping(m), parse_purification(p), seed=i)
        for i, (m, p) in enumerate((m, p) for m in mappings for p in purifications)
    ]
    rng = random.Random(zlib.crc32(game_name.encode()))  # hash() changes per process
    target = int(N_RANDOM_STATES * share)
    checked = 0
    hand = 0
    while checked < target:
        final, _ = random_playout(game, rng)
        deal = next(deal_hands(game, hand))
        s = BettingState.initial(game)
        policy = policies[hand % len(policies)]
        for a in [a for rnd in final.actions for a in rnd]:
            ms = view_of(s.player, hand, s, deal.hole, deal.board)
            action = policy.act(ms)
            assert s.is_legal(action), (s.betting, action)
            checked += 1
            s = s.apply(a)
        hand += 1


def test_summary_counts_agree_with_the_trace(tmp_path: Path, nl2: Game) -> None:
    """Off-tree decisions in the stats are exactly the trace's off-tree records, and every
    off-tree hand is counted once, whichever way it left the tree."""
    import random as _random

    from agent.builtin import RandomPolicy

    loaded = make_strategy(tmp_path, nl2, PRESETS["fcpa3"], BlindCards(nl2))
    records: list[dict[str, object]] = []
    policy = StrategyPolicy(loaded, get_mapping("det-arith"), parse_purification("none"),
                            seed=5, trace=records.append)
    opponent = RandomPolicy(9)
    rng = _random.Random(4)
    off_hands = set()
    for hand in range(300):
        state = BettingState.initial(nl2)
        me = rng.randrange(2)
        while not state.finished:
            ms = ms_for(nl2, state.betting, me, hand=hand) if state.player == me else \
                ms_for(nl2, state.betting, 1 - me, hand=hand)
            action = policy.act(ms) if state.player == me else opponent.act(ms)
            state = state.apply(action)
        off_hands |= {r["hand"] for r in records if r["hand"] == hand
                      and r["fallback"] == "off-tree: check/call"}
    off = [r for r in records if r["fallback"] == "off-tree: check/call"]
    assert off, "random opponents take the agent off a 3-raise tree"
    assert policy.stats.off_tree_decisions == len(off)
    assert policy.stats.off_tree_fallbacks >= len(off_hands) >= 1
    assert policy.stats.decisions == len(records)


@pytest.mark.parametrize("sizes_in", ["abstract", "real"])
def test_real_all_in_after_diverged_pots_in_the_policy(tmp_path: Path, sizes_in: str) -> None:
    """No-limit Leduc, fcpa, the agent in seat P2, Det-Arith. P1 opens to 7 (x = 3, read as
    the abstract pot bet to 3), the agent calls (real pot 14, abstract 6), P1 goes all-in
    to 12 in round 2 (x = 5/14 of the real pot). ``abstract`` reads it as a check (5/14 is
    below (0 + 1)/2, the abstract pot bet measuring 6/6): the agent, at the abstract node
    r3c/c, has no fold, and everything it can do there is a call of the all-in. ``real``
    reads it as the abstract all-in: the agent folds or calls from r3c/r12."""
    game = load_game("leduc.nolimit.2p.game")
    loaded = make_strategy(tmp_path, game, PRESETS["fcpa"], BlindCards(game), kind="random")
    for seed in range(20):
        records: list[dict[str, object]] = []
        policy = StrategyPolicy(loaded, get_mapping("det-arith"), parse_purification("none"),
                                seed=seed, mapping_name="det-arith", trace=records.append,
                                sizes_in=sizes_in)
        assert policy.sizes_in == sizes_in
        action = policy.act(ms_for(game, "r7c/r12", 1, hand=seed))
        first, second = records[-1]["translations"]  # type: ignore[misc]
        assert (first["x"], first["A"], first["B"], first["choice"]) == (3.0, 1.0, 5.5, "r3")
        assert first["sizes_in"] == second["sizes_in"] == sizes_in
        node = loaded.tree.nodes[records[-1]["node"]]  # type: ignore[index]
        assert second["x"] == round(5 / 14, 6)
        if sizes_in == "abstract":
            assert (second["A"], second["B"], second["f"], second["choice"]) == (
                0.0, 1.0, 1.0, "c")
            assert "all_in_rule" not in second
            assert node.state.betting == "r3c/c"
            assert action == CALL
        else:
            assert second["A"] == second["B"] == round(5 / 14, 6)
            assert (second["f"], second["choice"], second["all_in_rule"]) == (1.0, "r12", True)
            assert node.state.betting == "r3c/r12"
            assert action in (CALL, FOLD)
    assert policy.stats.translations == 2
