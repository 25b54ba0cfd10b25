"""Sampled abstract-game best response: an exploitability figure for hold'em strategy files.

Hold'em deals cannot be enumerated, and the bundled hold'em abstraction has *imperfect
recall* (an information set is the betting node and the bucket of the current round only),
so the exact abstract-game best response of :mod:`strategies.measure.best_response` does not apply.
This module measures a **lower bound** on the abstract-game exploitability instead, with a
confidence interval, in three steps:

1. **Learn** a best response for each position on a *training* set of random deals (a
   :class:`~strategies.solvers.dealpool.DealPool`): the responder has the agent's own information
   (betting node, bucket of the current round) and plays the abstract tree's actions.
   Bottom-up over the tree, at each of the responder's information sets it compares, over
   the training deals in that bucket, the counterfactual value of each action (weighted by
   the opponent's probability of reaching the node; chance is uniform over the deals) with
   the value of playing the strategy's own distribution there. Each deal also carries the
   responder's own probability of reaching the node had it followed the strategy so far:
   under imperfect recall deals of one bucket reach a node with different probabilities,
   and a deal the responder would rarely bring there should hardly count. The best action
   replaces the strategy's distribution only if its summed gain exceeds ``z`` standard
   errors of that sum (per-deal differences): with hundreds of thousands of information
   sets and a few deals in each deep one, an unguarded argmax learns the noise of the
   training deals and loses on fresh ones. Elsewhere, and where no training deal arrives,
   the responder plays the strategy itself (so the response is mixed where it follows).
   Deals reached with probability at most ``prune`` are dropped while learning.
2. **Evaluate** that fixed strategy, exactly over every mixed choice, on an
   independent *test* set of deals (a different pool seed), one value per deal. A fixed
   strategy's mean value on fresh deals is an unbiased estimate of what it wins, so its
   gain over the strategy profile's own value is a valid lower bound on how much a best
   response can win, unlike the value on the training deals (reported too, as the
   optimistic in-sample figure).
3. Report ``(br0 + br1) / 2`` (exploitability, chips per hand, and mbb per hand) with a 95%
   interval from the per-deal values, the profile's values, and each position's gain.

All three walks are one numba kernel (:func:`_walk`) over the flat tree of
:mod:`strategies.games.abstract`: a depth-first traversal with an explicit stack that carries, per
depth, the list of deals still reached with positive probability (so a pure or purified
strategy prunes whole subtrees) and their reach and value. A pure-Python oracle
(``tests/strategies/test_sampled_br.py``) checks it on small trees, and on a perfect-recall instance
with ``z = 0`` the learned strategy is checked against brute force over every pure one.

Imports :mod:`agent`, numpy, numba and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import UsageError
from agent.console import ticking
from agent.jit import nogil_kernel
from agent.strategy.fileformat import QUANT, Strategy
from agent.strategy.purification import Purification
from strategies.commands.defaults import (
    DEFAULT_TEST_DEALS,
    DEFAULT_TRAIN_DEALS,
    DEFAULT_Z,
    TEST_SEED,
    TRAIN_SEED,
)
from strategies.games.abstract import FlatTree, flatten_tree
from strategies.measure.best_response import purify_table
from strategies.solvers.dealpool import DealBucketer, DealPool, PoolCards, cached_pool

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
I8 = npt.NDArray[np.int8]
U16 = npt.NDArray[np.uint16]

KIND: Final = "sampled_lower_bound"
Z95: Final = 1.959963984540054
DEFAULT_PRUNE: Final = 1e-6
"""While learning, deals reached with at most this probability are dropped."""
NO_RESPONDER: Final = -1


FOLLOW: Final = -1
"""``choice`` value: the responder plays the strategy's own distribution there."""


@nogil_kernel
def _walk(
    player: I64, rnd: I64, num_actions: I64, child_start: I64, children: I64, offset: I64,
    term_value: F64, strategy: F64, buckets: U16, result: I8, responder: int, learn: bool,
    z: float, prune: float, choice: I8, out: F64,
) -> None:
    """One walk of the tree over every deal; ``out[i]`` gets deal ``i``'s value.

    ``responder`` is the best-responding position (:data:`NO_RESPONDER`: both positions
    play ``strategy``). With ``learn``, the responder's choice per (node, bucket) is made
    and written to ``choice`` (an action, or :data:`FOLLOW`); without, it is read from
    ``choice``. Values are the responder's (position 0's without a responder), exact
    expectations over every mixed choice.

    The learned choice at an information set is the action ``a*`` with the largest summed
    counterfactual value over the deals of its bucket, if its gain over following the
    strategy there (summed per-deal differences ``d``) exceeds ``z`` standard errors of that
    sum; otherwise :data:`FOLLOW`. While learning, deals whose reach falls to ``prune`` or
    below are dropped (their values would hardly move a sum; the evaluation walks, which
    give the figures, never prune).
    """
    n = result.shape[0]
    nodes = player.shape[0]
    depth_of = np.zeros(nodes, np.int64)
    max_depth = 0
    max_k = 1
    for v in range(nodes):
        s = child_start[v]
        max_k = max(max_k, num_actions[v])
        for a in range(num_actions[v]):
            c = children[s + a]
            depth_of[c] = depth_of[v] + 1
            max_depth = max(max_depth, depth_of[c])
    levels = max_depth + 2
    idx = np.empty((levels, n), np.int32)      # deals active at this depth
    pos = np.empty((levels, n), np.int32)      # their position in the parent's list
    reach = np.empty((levels, n))              # reach of every mixed choice above
    acc = np.empty((levels, n))                # counterfactual values being accumulated
    own = np.empty((levels, n)) if learn else np.empty((1, 1))  # responder's reach if it
    # followed the strategy above: the weight of a deal in the responder's decisions
    count = np.zeros(levels, np.int64)
    cv = np.empty((levels, max_k, n)) if learn else np.empty((1, 1, 1))
    max_rows = choice.shape[1]
    sums = np.empty((max_rows, max_k))
    gain = np.empty(max_rows)
    gain2 = np.empty(max_rows)
    in_bucket = np.empty(max_rows, np.int64)
    node_at = np.zeros(levels, np.int64)
    next_action = np.zeros(levels, np.int64)
    sign = -1.0 if responder == 1 else 1.0
    floor = prune if learn else 0.0
    for i in range(n):
        idx[0, i] = i
        reach[0, i] = 1.0
        if learn:
            own[0, i] = 1.0
    count[0] = n
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        k = num_actions[node]
        p = player[node]
        r = rnd[node]
        m = count[depth]
        mine = p == responder and learn
        if a < 0:  # entering the node
            if k == 0:
                for j in range(m):
                    acc[depth, j] = sign * reach[depth, j] * term_value[node, result[idx[depth, j]]]
                depth -= 1
                continue
            for j in range(m):
                acc[depth, j] = 0.0
            a = 0
        else:  # child ``a`` is done: its values are acc[depth + 1, :count[depth + 1]]
            mc = count[depth + 1]
            if mine:  # every deal went to every child, in the same order
                for j in range(mc):
                    cv[depth, a, j] = acc[depth + 1, j]
            else:
                for j in range(mc):
                    acc[depth, pos[depth + 1, j]] += acc[depth + 1, j]
            a += 1
        if a >= k:
            if mine:
                rows = choice.shape[1]
                base = offset[node]
                for b in range(rows):
                    gain[b] = 0.0
                    gain2[b] = 0.0
                    in_bucket[b] = 0
                    for c in range(k):
                        sums[b, c] = 0.0
                for j in range(m):
                    b = buckets[idx[depth, j], p, r]
                    in_bucket[b] += 1
                    w = own[depth, j]
                    for c in range(k):
                        sums[b, c] += w * cv[depth, c, j]
                for b in range(rows):
                    top = 0
                    for c in range(1, k):
                        if sums[b, c] > sums[b, top]:
                            top = c
                    choice[node, b] = top
                for j in range(m):  # per-deal gains of the best action over following
                    b = buckets[idx[depth, j], p, r]
                    row = base + b * k
                    mixed = 0.0
                    for c in range(k):
                        mixed += strategy[row + c] * cv[depth, c, j]
                    acc[depth, j] = mixed  # this deal's value unless the choice holds
                    d = own[depth, j] * (cv[depth, choice[node, b], j] - mixed)
                    gain[b] += d
                    gain2[b] += d * d
                for b in range(rows):
                    nb = in_bucket[b]
                    keep = False
                    if nb >= 2 and gain[b] > 0.0:
                        var = (gain2[b] - gain[b] * gain[b] / nb) * nb / (nb - 1.0)
                        keep = gain[b] > z * np.sqrt(max(var, 0.0))
                    if not keep:
                        choice[node, b] = FOLLOW
                for j in range(m):
                    t = choice[node, buckets[idx[depth, j], p, r]]
                    if t != FOLLOW:
                        acc[depth, j] = cv[depth, t, j]
            depth -= 1
            continue
        # enter child ``a`` with the deals that reach it
        c = 0
        base = offset[node] + a
        if mine:
            for j in range(m):
                i = idx[depth, j]
                idx[depth + 1, j] = i
                pos[depth + 1, j] = j
                reach[depth + 1, j] = reach[depth, j]
                own[depth + 1, j] = own[depth, j] * strategy[base + buckets[i, p, r] * k]
            c = m
        else:
            for j in range(m):
                i = idx[depth, j]
                b = buckets[i, p, r]
                if p == responder and choice[node, b] != FOLLOW:
                    q = reach[depth, j] if choice[node, b] == a else 0.0
                else:
                    q = reach[depth, j] * strategy[base + b * k]
                if q > floor:
                    idx[depth + 1, c] = i
                    pos[depth + 1, c] = j
                    reach[depth + 1, c] = q
                    if learn:
                        own[depth + 1, c] = own[depth, j]
                    c += 1
        count[depth + 1] = c
        next_action[depth] = a
        if c == 0:
            if mine:
                for j in range(m):
                    cv[depth, a, j] = 0.0
            continue  # nothing reaches the child: it adds nothing (handled as done)
        node_at[depth + 1] = children[child_start[node] + a]
        next_action[depth + 1] = -1
        depth += 1
    for j in range(n):
        out[idx[0, j]] = acc[0, j]


# --------------------------------------------------------------------------- Python side


def strategy_values(strategy: Strategy, purification: Purification | None = None) -> F64:
    """The file's table as float64 probabilities (rows renormalised), purified if asked."""
    table = np.asarray(strategy.table, dtype=np.float64)
    if strategy.table.dtype == np.uint16:
        table = table / QUANT
    return purify_table(strategy.layout, table, purification)


def _choice_table(flat: FlatTree) -> I8:
    return np.zeros((len(flat.player), max(flat.layout.buckets)), dtype=np.int8)


def walk(
    flat: FlatTree, strategy: F64, buckets: U16, result: I8, responder: int, *,
    learn: bool, choice: I8, z: float = 0.0, prune: float = 0.0,
) -> F64:
    """Per-deal values of one walk (:func:`_walk`); see the module docstring.

    With ``learn``, ``choice`` is first set to :data:`FOLLOW` everywhere (what the
    information sets no deal reaches keep), then filled in.
    """
    out = np.zeros(result.shape[0])
    if learn:
        choice[:] = FOLLOW
    _walk(*flat.arrays(), strategy, buckets, result, responder, learn, float(z), float(prune),
          choice, out)
    return out


@dataclass(frozen=True, slots=True)
class SampledExploitability:
    """Sampled best-response figures of a two-player strategy (chips per hand)."""

    values: tuple[float, float]
    """Each position's value when both play the strategy (test deals)."""
    best_responses: tuple[float, float]
    """What the learned best response wins in each position (test deals)."""
    best_response_se: tuple[float, float]
    in_sample: tuple[float, float]
    """The best responses' values on their own training deals (optimistic)."""
    exploitability: float
    """``(best_responses[0] + best_responses[1]) / 2``: a lower bound (in expectation)."""
    ci95: float
    """Half-width of the 95% interval of :attr:`exploitability` over the test deals."""
    big_blind: int
    train_deals: int
    test_deals: int
    train_seed: int
    test_seed: int
    z: float
    purification: str
    seconds: float

    @property
    def gains(self) -> tuple[float, float]:
        return (self.best_responses[0] - self.values[0], self.best_responses[1] - self.values[1])

    @property
    def mbb(self) -> float:
        """:attr:`exploitability` in milli-big-blinds per hand."""
        return 1000.0 * self.exploitability / self.big_blind

    def to_json(self) -> dict[str, Any]:
        return {
            "exploitability": self.exploitability,
            "exploitability_kind": KIND,
            "exploitability_ci95": self.ci95,
            "exploitability_mbb": self.mbb,
            "exploitability_ci95_mbb": 1000.0 * self.ci95 / self.big_blind,
            "best_responses": list(self.best_responses),
            "best_response_se": list(self.best_response_se),
            "best_responses_in_sample": list(self.in_sample),
            "game_value": list(self.values),
            "train_deals": self.train_deals,
            "test_deals": self.test_deals,
            "train_seed": self.train_seed,
            "test_seed": self.test_seed,
            "z": self.z,
            "purification": self.purification,
            "seconds": round(self.seconds, 2),
            "units": "chips per hand",
        }


TICK_SECONDS = 30.0
"""How often a long step of :func:`sampled_exploitability` says it is still running."""


def sampled_exploitability(
    strategy: Strategy, *, purification: Purification | None = None,
    train_deals: int = DEFAULT_TRAIN_DEALS, test_deals: int = DEFAULT_TEST_DEALS,
    train_seed: int = TRAIN_SEED, test_seed: int = TEST_SEED, z: float = DEFAULT_Z,
    prune: float = DEFAULT_PRUNE, workers: int = 2,
    log: Callable[[str], None] | None = None,
) -> SampledExploitability:
    """The sampled best-response figures of a heads-up hold'em strategy file.

    Deal pools come from (and go to) the pool cache of :mod:`strategies.solvers.dealpool`.

    Raises:
        ValueError: unless the file is for a 2-player game with a hold'em card
            abstraction, or for pool sizes below 2 or equal seeds.
    """
    from agent.abstraction.buckets import card_abstraction_from_spec
    from agent.abstraction.holdem_buckets import HoldemCards

    say = log or (lambda text: None)
    game = strategy.game
    if game.num_players != 2:
        raise UsageError(f"expected a 2-player game, got {game.num_players} players")
    if strategy.cards.get("kind") not in ("holdem", "holdem-pa", "graft"):
        raise UsageError(f"expected a hold'em card abstraction, got kind "
                         f"{strategy.cards.get('kind')!r}")
    if train_deals < 2 or test_deals < 2:
        raise UsageError(f"expected at least 2 training and 2 test deals, got {train_deals} "
                         f"and {test_deals}")
    if train_seed == test_seed:
        raise UsageError(f"expected different training and test seeds, got {train_seed} twice")
    t0 = time.perf_counter()
    cards = card_abstraction_from_spec(game, strategy.cards)
    regraft: Callable[[DealPool], DealPool] = lambda pool: pool  # noqa: E731
    pool_cards: PoolCards
    if isinstance(cards, HoldemCards):
        pool_cards = cards
    elif hasattr(cards, "bucket_deals"):  # a table-backed abstraction (holdem-pa)
        pool_cards = cast(DealBucketer, cards)
    else:
        from agent.abstraction.graft_cards import GraftCards
        from strategies.grafting.pool import grafted_pool, pool_cards_of

        assert isinstance(cards, GraftCards)
        pool_cards = pool_cards_of(cards)
        graft_cards = cards
        regraft = lambda pool: grafted_pool(graft_cards, pool)  # noqa: E731
    flat = flatten_tree(strategy.tree, cards.buckets)
    table = strategy_values(strategy, purification)
    pools = []
    for name, size, seed in (("training", train_deals, train_seed),
                             ("test", test_deals, test_seed)):
        t = time.perf_counter()
        pool = cached_pool(pool_cards, size, seed=seed, workers=workers)
        how = f"built in {time.perf_counter() - t:.1f} s" if pool.seconds else "cached"
        say(f"{name} deals: {size:,} (pool seed {seed}, {how})")
        pools.append(regraft(pool))
    train, test = pools
    choices = [_choice_table(flat), _choice_table(flat)]

    def learn(p: int) -> F64:
        return walk(flat, table, train.buckets, train.result, p, learn=True, choice=choices[p],
                    z=z, prune=prune)

    def evaluate(p: int) -> F64:
        return walk(flat, table, test.buckets, test.result, p, learn=False, choice=choices[p])

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, min(workers, 2))) as ex:
        with ticking(say, f"learning both positions' best responses on {train_deals:,} "
                     f"deals", TICK_SECONDS):
            in_sample = [float(v.mean()) for v in ex.map(learn, (0, 1))]
        say(f"best responses learned in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        profile = ex.submit(walk, flat, table, test.buckets, test.result, NO_RESPONDER,
                            learn=False, choice=choices[0])
        br = list(ex.map(evaluate, (0, 1)))
        value0 = profile.result()
    say(f"evaluated on the test deals in {time.perf_counter() - t:.1f} s")
    per_deal = (br[0] + br[1]) / 2.0
    n = per_deal.shape[0]
    se = [float(v.std(ddof=1) / math.sqrt(n)) for v in br]
    v0 = float(value0.mean())
    return SampledExploitability(
        values=(v0, -v0),
        best_responses=(float(br[0].mean()), float(br[1].mean())),
        best_response_se=(se[0], se[1]),
        in_sample=(in_sample[0], in_sample[1]),
        exploitability=float(per_deal.mean()),
        ci95=Z95 * float(per_deal.std(ddof=1) / math.sqrt(n)),
        big_blind=max(game.blind),
        train_deals=train_deals,
        test_deals=test_deals,
        train_seed=train_seed,
        test_seed=test_seed,
        z=z,
        purification=str(purification) if purification is not None else "none",
        seconds=time.perf_counter() - t0,
    )
