"""Sampled LBR in Royal no-limit hold'em against the exact best response (issue 17, item 3).

Royal (20 cards, stacks of 10 big blinds, a preflop and a flop round) is too big for the
exact LBR of :mod:`strategies.measure.lbr` (it enumerates every deal, about 16 M ordered ones) but
:mod:`strategies.measure.translation.royal_br` gives the *exact* full-game best response against a
translating agent from its public tree. LBR is one strategy of the responder (a function of
its own cards, the public history and its own coin flips), so in expectation it can never
win more than the best response, seat by seat and on average over the seats.

The check, for the bundled ``fcpa`` file with a randomized mapping played mixed
(``rand-pshar``, purification ``none``) and a deterministic one played fully purified
(``det-arith``, ``full``): the sampled LBR (:mod:`strategies.measure.sampled_lbr`, duplicate deals
from a fixed seed, preflop rule ``call``: LBR checks or calls every preflop decision, the
fast published configuration and the command's default) plays real hands against the very
policy object the command builds, and the exact best response is computed for *that*
agent: the same loaded strategy, card abstraction, mapping, purification and size
convention, taken from the player. Asserted:

* LBR's mean (chips per hand, both positions) <= the exact best response averaged over both
  seats + LBR's 95% half-width (duplicate deals: the tighter interval);
* per position ``q`` (position 0 posts the big blind, as the best response's seat 0): LBR's
  mean there <= the exact best response in seat ``q`` + its own 95% half-width;
* LBR's mean - its half-width > -1.5 chips (-750 mbb/h): the value of always folding (the
  small blind gives up 1 chip, the big blind at most 2). Any strategy doing worse than
  folding everything is broken; an LBR that picked its worst option, or misread the range,
  loses far more than that against these agents (they move all-in often preflop).

The card abstraction (lossless, suit isomorphism: about 10 s to enumerate in Python) is
built once and shared by the two players: ``card_abstraction_from_spec`` is memoised
for the module, which changes nothing but the time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from agent.abstraction import buckets
from agent.policy import StrategyPolicy
from strategies.measure.sampled_lbr import ChunkPlayer, LbrConfig, summarize
from strategies.measure.translation import royal_br as rb

FILE = "royal.nolimit.2p.fcpa.strat"
CHUNKS = 40
"""Chunks of 10 duplicate deals per case: 800 hands."""
FOLDING = -1.5
"""Chips per hand of always folding in Royal (blinds 2 and 1), both positions averaged."""


@pytest.fixture(scope="module")
def shared_cards() -> Iterator[None]:
    original = buckets.card_abstraction_from_spec
    memo: dict[tuple[str, str], Any] = {}

    def memoised(game: Any, spec: dict[str, object], checked: Any = None) -> Any:
        key = (str(game.fingerprint), json.dumps(spec, sort_keys=True))
        if key not in memo:
            memo[key] = original(game, spec, checked)
        return memo[key]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(buckets, "card_abstraction_from_spec", memoised)
        yield


def exact_and_sampled(mapping: str, purify: str,
                      seed: int) -> tuple[rb.RoyalFigures, list[list[float]], float]:
    """The exact best responses to the agent the sampled LBR plays, LBR's hands
    (``[deal, lbr_position, chips]``) and the big blind."""
    player = ChunkPlayer(LbrConfig(FILE, None, mapping=mapping, purify=purify,
                                   preflop="call", seed=seed))
    policy = player.base
    assert isinstance(policy, StrategyPolicy)
    assert policy.mapping_name == mapping and policy.purification.kind == purify
    agent = rb.translated_agent(policy.loaded.strategy, policy.purification,
                                cards=policy.loaded.cards)
    exact = rb.RoyalLab(agent).measure(policy.mapping, policy.sizes_in)
    rows: list[list[float]] = []
    for chunk in range(CHUNKS):
        rows += player.play(chunk)
    return exact, rows, float(max(player.game.blind))


@pytest.mark.parametrize(("mapping", "purify", "seed"),
                         [("rand-pshar", "none", 1), ("det-arith", "full", 2)])
def test_sampled_lbr_never_exceeds_the_exact_best_response_in_royal(
        shared_cards: None, mapping: str, purify: str, seed: int) -> None:
    exact, rows, big_blind = exact_and_sampled(mapping, purify, seed)
    s = summarize(rows, big_blind)
    assert s.hands == 20 * CHUNKS and big_blind == 2.0
    assert exact.average > 0.0  # the agent is exploitable: the upper bound is not vacuous
    assert s.chips <= exact.average + s.half_width, (s, exact.best_responses)
    assert s.chips - s.half_width > FOLDING, (s, exact.best_responses)
    for q in (0, 1):
        mean, half = _mean_and_half_width([v for _, p, v in rows if int(p) == q])
        assert mean <= exact.best_responses[q] + half, (q, mean, half, exact.best_responses)


def _mean_and_half_width(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), float(1.96 * a.std(ddof=1) / math.sqrt(a.size))
