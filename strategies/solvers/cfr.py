"""Counterfactual regret minimisation over the flat abstract game: one solver, many flags.

:class:`Solver` is the one base solver (the OpenSpiel shape): behaviour flags in a
:class:`SolverConfig` select vanilla CFR, CFR+, discounted CFR (DCFR, and linear CFR as its
special case), external-sampling Monte Carlo CFR, chance-sampled CFR or Pure CFR, and
:class:`CFRSolver`, :class:`CFRPlusSolver`, :class:`DCFRSolver`, :class:`LinearCFRSolver`,
:class:`ExternalSamplingSolver`, :class:`ChanceSampledSolver` and :class:`PureCFRSolver`
are thin named variants. The API: :meth:`Solver.iterate`,
:meth:`Solver.average_strategy` (the flat table in
:func:`agent.strategy.fileformat.table_layout` order, ready for ``dump_strategy``),
:meth:`Solver.save_checkpoint` / :meth:`Solver.load_checkpoint` (``.npz`` with
``allow_pickle=False``: arrays and a JSON header, never pickle) and a ``seed``.

The flags, per iteration ``t = 1, 2, ...``:

* ``alternating``: one pass per player, each updating only that player's regrets and
  average with the others' *current* strategies already updated in the same iteration
  (OpenSpiel's default); otherwise one simultaneous pass for everybody.
* ``regret_plus``: regret matching+ (cumulative regrets floored at 0 after each pass).
* ``discount`` with ``alpha``/``beta``: after each pass, positive cumulative regrets are
  multiplied by ``t**alpha / (t**alpha + 1)`` and negative ones by
  ``t**beta / (t**beta + 1)`` (Brown and Sandholm 2019, as OpenSpiel applies it).
* ``gamma``: the average strategy weighs iteration ``t`` by ``t**gamma`` (0 = uniform,
  1 = linear as in CFR+, 2 = DCFR's default). Discounting the accumulated average by
  ``(t/(t+1))**gamma`` every iteration gives the same normalised average.
* ``sampling="external"``: external-sampling MCCFR (Lanctot et al. 2009). Each iteration
  runs one traversal per player, the traverser's turn alternating; chance (the whole deal)
  and the other players' actions are sampled from :mod:`strategies.solvers.rng` (MRG32k3a, seeded,
  saved in checkpoints), the traverser's actions are all explored, and the other players'
  average strategies are updated at their sampled nodes. Always alternating.
* ``sampling="chance"``: chance-sampled CFR (Zinkevich et al. 2007; Lanctot et al. 2009):
  each pass draws one deal from the deals' distribution and runs vanilla CFR on that deal
  alone with chance weight 1 (every action of every player explored). Alternating: one
  drawn deal per player's pass; otherwise one deal and one pass for everybody.
* ``sampling="pure"``: Pure CFR (Gibson 2014, the solver of the published Royal study): per
  traversal a deal is drawn and every row entered samples one action from its
  regret-matching strategy (a pure strategy profile); the traverser explores every action
  and adds ``u(a) - u(sampled)`` to its regrets, the node's value being ``u(sampled)``; the
  other players follow their sampled action and count it (``t**gamma``) in their average.
  With integer payoffs the regrets are integers (held exactly in float64). Always
  alternating.
* ``discount_interval`` / ``discount_until`` (external sampling): linear-CFR-style
  discounting as in Pluribus (Brown and Sandholm 2019): after every ``discount_interval``
  iterations, while ``t <= discount_until``, regrets and average sums are multiplied by
  ``k / (k + 1)`` where ``k = t // discount_interval``.

**Where chance comes from.** The game is either an :class:`~strategies.games.abstract.AbstractGame`
(every deal enumerated with its probability; full-width passes or external sampling, deals
drawn from the cumulative distribution) or a :class:`~strategies.solvers.dealpool.PoolGame` (a
flat two-player tree and a pool of sampled deals with precomputed buckets and showdown
results; external sampling or Pure CFR only, deals drawn uniformly from the pool: the
``mccfr-es-pool`` variant the hold'em recipe uses). Both give the kernels the same flat arrays
(``kernel_args``), so there is one external-sampling traversal (:func:`_es_pass`) and one
run loop (:func:`_es_run`) for both. Rows a pool solve never reached average to the
regret-matching strategy of their regrets (uniform without positive regrets).

Full-width passes are vectorised over chance: one walk of the betting tree per pass, with
every player's reach probability and every player's value held as vectors over all the
enumerated deals (:mod:`strategies.games.abstract`); each deal's row of the table is its bucket's.
Regrets are counterfactual (weighted by chance and the other players' reach); the average
strategy accumulates ``weight * own reach * current strategy`` (OpenSpiel's convention).
A subtree is skipped when every player's reach is zero for every deal (it cannot change
anything). Rows never reached average to uniform.

Kernels are private :func:`agent.jit.kernel` functions over flat arrays that mutate
preallocated outputs; the class validates, allocates and times. Each kernel has a slow
pure-Python oracle in ``tests/strategies/test_cfr.py`` (enumerated games) and
``tests/strategies/test_holdem_solver.py`` (pool games). The kernels walk the tree depth
first with an explicit stack (per-depth frames), not recursion: numba's on-disk cache
crashes when it reloads self-recursive functions (numba issue #6061).

Imports :mod:`agent`, numpy, numba and :mod:`strategies` modules; never imported by
:mod:`agent`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import format_gamedef
from agent.jit import inline_kernel, kernel
from strategies.cache import write_npz
from strategies.games.abstract import AbstractGame, KernelGame, normalise_rows
from strategies.solvers import rng as _rng
from strategies.solvers.dealpool import PoolGame

SolverGame = AbstractGame | PoolGame
"""What a :class:`Solver` solves: enumerated deals or a deal pool."""

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

CHECKPOINT_FORMAT = "acpc-arena-checkpoint"
CHECKPOINT_VERSION = 2
"""Version 2 adds the pool identity and ``value_sum``; version 1 files, and version 1 files
of the former hold'em format (:data:`_OLD_POOL_FORMAT`), still load."""
_OLD_POOL_FORMAT = "acpc-arena-holdem-checkpoint"
POOL_SOLVER = "mccfr-es-pool"
"""The variant name of external sampling over a deal pool (the hold'em recipes)."""


class CheckpointError(AcpcError, ValueError):
    """A solver checkpoint is corrupt or belongs to another game, abstraction or solver."""



# --------------------------------------------------------------------------- configuration

Sampling = Literal["full", "external", "chance", "pure"]
SAMPLINGS: tuple[str, ...] = ("full", "external", "chance", "pure")


@dataclass(frozen=True, slots=True)
class SolverConfig:
    """Behaviour flags of :class:`Solver` (see the module docstring)."""

    name: str = "cfr"
    sampling: Sampling = "full"
    alternating: bool = True
    regret_plus: bool = False
    discount: bool = False
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 0.0
    discount_interval: int = 0
    discount_until: int = 0

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise UsageError(f"expected sampling in {SAMPLINGS}, got {self.sampling!r}")
        if self.sampling in ("external", "pure") and not self.alternating:
            raise UsageError(f"{self.sampling} sampling always alternates: expected "
                             f"alternating=True")
        for key in ("alpha", "beta", "gamma"):
            value = getattr(self, key)
            if not math.isfinite(value):
                raise UsageError(f"expected a finite {key}, got {value!r}")
        if self.gamma < 0:
            raise UsageError(f"expected gamma >= 0, got {self.gamma!r}")
        for key in ("discount_interval", "discount_until"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UsageError(f"expected a non-negative integer {key}, got {value!r}")
        if self.discount_interval and self.sampling != "external":
            raise UsageError("expected discount_interval only with external sampling")

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :meth:`from_json` reads back (the pool variant's is its
        name and discount schedule only)."""
        if self.name == POOL_SOLVER:
            return {"name": self.name, "discount_interval": self.discount_interval,
                    "discount_until": self.discount_until}
        data = dataclasses.asdict(self)
        if not self.discount_interval and not self.discount_until:
            del data["discount_interval"], data["discount_until"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SolverConfig:
        """Rebuild a configuration from :meth:`to_json`.

        Raises:
            ValueError: for unknown keys or bad values.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise UsageError(f"expected solver config keys {sorted(known)}, got {sorted(data)}")
        if data.get("name") == POOL_SOLVER:
            return dataclasses.replace(VARIANTS[POOL_SOLVER], **data)
        return cls(**data)


VARIANTS: dict[str, SolverConfig] = {
    "cfr": SolverConfig("cfr"),
    "cfr+": SolverConfig("cfr+", regret_plus=True, gamma=1.0),
    "lcfr": SolverConfig("lcfr", discount=True, alpha=1.0, beta=1.0, gamma=1.0),
    "dcfr": SolverConfig("dcfr", discount=True, alpha=1.5, beta=0.0, gamma=2.0),
    "mccfr-es": SolverConfig("mccfr-es", sampling="external"),
    "cfr-cs": SolverConfig("cfr-cs", sampling="chance"),
    "pure-cfr": SolverConfig("pure-cfr", sampling="pure"),
    POOL_SOLVER: SolverConfig(POOL_SOLVER, sampling="external"),
}
"""The named variants: vanilla CFR, CFR+ (RM+, linear averaging), linear CFR, DCFR(1.5, 0,
2), external-sampling MCCFR, chance-sampled CFR, Pure CFR, and external sampling over a deal
pool (with a discount schedule set by the recipe); all alternate updates."""


def solver_config(spec: str | SolverConfig) -> SolverConfig:
    """A variant name from :data:`VARIANTS`, or a config passed through.

    Raises:
        ValueError: for an unknown name.
    """
    if isinstance(spec, SolverConfig):
        return spec
    try:
        return VARIANTS[spec]
    except KeyError:
        raise UsageError(f"expected a solver in {', '.join(VARIANTS)}, got {spec!r}") from None


# --------------------------------------------------------------------------- kernels


@kernel
def _regret_matching(g: KernelGame, regrets: F64, out: F64, only_player: int) -> None:
    """Current strategy of every row (of ``only_player``, or all if -1) from its regrets."""
    player, offset, rows, num_actions = g[0], g[5], g[6], g[2]
    for n in range(len(offset)):
        if offset[n] < 0 or (only_player >= 0 and player[n] != only_player):
            continue
        k = num_actions[n]
        for b in range(rows[n]):
            start = offset[n] + b * k
            total = 0.0
            for a in range(k):
                r = regrets[start + a]
                if r > 0.0:
                    total += r
            if total > 0.0:
                for a in range(k):
                    r = regrets[start + a]
                    out[start + a] = r / total if r > 0.0 else 0.0
            else:
                for a in range(k):
                    out[start + a] = 1.0 / k


@kernel
def _post_update(
    g: KernelGame, regrets: F64, only_player: int, t: int, plus: bool, discount: bool,
    alpha: float, beta: float,
) -> None:
    """After a pass: discount (DCFR) and floor (RM+) the regrets of the updated rows."""
    if not plus and not discount:
        return
    player, offset, rows, num_actions = g[0], g[5], g[6], g[2]
    ta = float(t) ** alpha
    tb = float(t) ** beta
    pos = ta / (ta + 1.0)
    neg = tb / (tb + 1.0)
    for n in range(len(offset)):
        if offset[n] < 0 or (only_player >= 0 and player[n] != only_player):
            continue
        start = offset[n]
        for i in range(start, start + rows[n] * num_actions[n]):
            r = regrets[i]
            if discount:
                r = r * pos if r > 0.0 else r * neg
            if plus and r < 0.0:
                r = 0.0
            regrets[i] = r


@kernel
def _cfr_pass(
    g: KernelGame, update_player: int, weight: float, current: F64, regrets: F64,
    strategy_sum: F64, reach: F64, value: F64, action_value: F64, node_at: I64, next_action: I64,
) -> None:
    """One full-width pass over the tree, vectorised over deals (depth-first, no recursion).

    ``reach[0]`` (players x deals) holds the root's reach; ``reach[depth]`` and
    ``value[depth]`` are the frames of the node at that depth on the current path. The
    expected payoff of every player for every deal ends in ``value[0]``. Updates the
    regrets and average of ``update_player`` (every player if -1).
    """
    (player, rnd, num_actions, child_start, children, offset, _rows, terminal, term_set,
     term_payoff, deal_prob, deal_bucket, deal_pattern) = g  # fmt: skip
    n_players = reach.shape[1]
    n_deals = reach.shape[2]
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        if a < 0:  # entering the node
            t = terminal[node]
            if t >= 0:
                s = term_set[t]
                for d in range(n_deals):
                    pattern = 0 if s < 0 else deal_pattern[d, s]
                    for q in range(n_players):
                        value[depth, q, d] = term_payoff[t, pattern, q]
                depth -= 1
                continue
            live = False
            for q in range(n_players):
                for d in range(n_deals):
                    value[depth, q, d] = 0.0
                    if reach[depth, q, d] != 0.0:
                        live = True
            if not live:  # nobody reaches it with any deal: nothing below can matter
                depth -= 1
                continue
            a = 0
        else:  # child ``a`` is done: its values are in value[depth + 1]
            p = player[node]
            k = num_actions[node]
            base = offset[node] + a
            r = rnd[node]
            for d in range(n_deals):
                s_a = current[base + deal_bucket[d, p, r] * k]
                for q in range(n_players):
                    value[depth, q, d] += s_a * value[depth + 1, q, d]
                action_value[depth, a, d] = value[depth + 1, p, d]
            a += 1
        p = player[node]
        k = num_actions[node]
        r = rnd[node]
        if a < k:
            next_action[depth] = a
            base = offset[node] + a
            for q in range(n_players):
                for d in range(n_deals):
                    reach[depth + 1, q, d] = reach[depth, q, d]
            for d in range(n_deals):
                reach[depth + 1, p, d] *= current[base + deal_bucket[d, p, r] * k]
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        if update_player < 0 or update_player == p:
            base = offset[node]
            for d in range(n_deals):
                cf = deal_prob[d]
                for q in range(n_players):
                    if q != p:
                        cf *= reach[depth, q, d]
                own = weight * reach[depth, p, d]
                row = base + deal_bucket[d, p, r] * k
                v = value[depth, p, d]
                for b in range(k):
                    regrets[row + b] += cf * (action_value[depth, b, d] - v)
                    strategy_sum[row + b] += own * current[row + b]
        depth -= 1


@kernel
def _cfr_run(
    g: KernelGame, iterations: int, t0: int, alternating: bool, plus: bool, discount: bool,
    alpha: float, beta: float, gamma: float, regrets: F64, strategy_sum: F64, current: F64,
    reach: F64, value: F64, action_value: F64, node_at: I64, next_action: I64,
) -> None:
    """``iterations`` full-width iterations numbered ``t0 + 1, ...``."""
    n_players = reach.shape[1]
    passes = n_players if alternating else 1
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for j in range(passes):
            update = j if alternating else -1
            _regret_matching(g, regrets, current, -1)
            reach[0, :, :] = 1.0
            _cfr_pass(g, update, weight, current, regrets, strategy_sum, reach, value,
                      action_value, node_at, next_action)
            _post_update(g, regrets, update, t, plus, discount, alpha, beta)


@kernel
def _sample_index(cumulative: F64, u: float) -> int:
    """The first index whose cumulative probability exceeds ``u`` (the last if none)."""
    for i in range(len(cumulative)):
        if u < cumulative[i]:
            return i
    return len(cumulative) - 1


@inline_kernel
def _row_sigma(regrets: F64, row: int, k: int, sigma: F64, depth: int) -> None:
    """``sigma[depth]``: the regret-matching strategy of the ``k`` regrets at ``row``."""
    positive = 0.0
    for b in range(k):
        r = regrets[row + b]
        if r > 0.0:
            positive += r
    for b in range(k):
        r = regrets[row + b]
        if positive > 0.0:
            sigma[depth, b] = r / positive if r > 0.0 else 0.0
        else:
            sigma[depth, b] = 1.0 / k


@inline_kernel
def _draw(sigma: F64, depth: int, k: int, u: float) -> int:
    """The action of ``sigma[depth]`` that the uniform draw ``u`` picks (the last if none)."""
    choice = k - 1
    c = 0.0
    for b in range(k):
        c += sigma[depth, b]
        if u < c:
            choice = b
            break
    return choice


@kernel
def _es_pass(
    g: KernelGame, deal: int, traverser: int, weight: float, regrets: F64, strategy_sum: F64,
    state: I64, sigma: F64, utility: F64, total: F64, node_at: I64, next_action: I64,
) -> float:
    """One external-sampling traversal for ``deal``; returns the traverser's value.

    Depth-first without recursion: at the traverser's nodes every action is explored, at
    the others' one action is drawn from their current strategy (after adding it to their
    average), in the order a recursive traversal would draw them.
    """
    (player, rnd, num_actions, child_start, children, offset, _rows, terminal, term_set,
     term_payoff, _deal_prob, deal_bucket, deal_pattern) = g  # fmt: skip
    ret = 0.0
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        p = player[node]
        k = num_actions[node]
        if a < 0:  # entering the node
            t = terminal[node]
            if t >= 0:
                s = term_set[t]
                pattern = 0 if s < 0 else deal_pattern[deal, s]
                ret = term_payoff[t, pattern, traverser]
                depth -= 1
                continue
            row = offset[node] + deal_bucket[deal, p, rnd[node]] * k
            _row_sigma(regrets, row, k, sigma, depth)
            if p != traverser:
                for b in range(k):
                    strategy_sum[row + b] += weight * sigma[depth, b]
                choice = _draw(sigma, depth, k, _rng.uniform(state))
                next_action[depth] = k  # on return, pass the child's value up
                node_at[depth + 1] = children[child_start[node] + choice]
                next_action[depth + 1] = -1
                depth += 1
                continue
            total[depth] = 0.0
            a = 0
        else:  # child ``a`` is done with value ``ret``
            if p != traverser:
                depth -= 1
                continue
            utility[depth, a] = ret
            total[depth] += sigma[depth, a] * ret
            a += 1
        if a < k:
            next_action[depth] = a
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        row = offset[node] + deal_bucket[deal, p, rnd[node]] * k
        v = total[depth]
        for b in range(k):
            regrets[row + b] += utility[depth, b] - v
        ret = v
        depth -= 1
    return ret


@kernel
def _es_run(
    g: KernelGame, iterations: int, t0: int, plus: bool, discount: bool, alpha: float,
    beta: float, gamma: float, discount_interval: int, discount_until: int, regrets: F64,
    strategy_sum: F64, state: I64, cumulative: F64, sigma: F64, utility: F64, total: F64,
    node_at: I64, next_action: I64,
) -> float:
    """``iterations`` external-sampling iterations (one traversal per player each).

    A deal is drawn from ``cumulative`` (the enumerated deals' distribution), or uniformly
    from the ``deal_bucket`` rows if ``cumulative`` is empty (a pool). Returns the sum of
    position 0's sampled traversal values, a cheap running estimate of its game value.
    """
    n_deals = g[11].shape[0]
    n_players = g[11].shape[1]
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for p in range(n_players):
            deal = _draw_deal(cumulative, n_deals, state)
            v = _es_pass(g, deal, p, weight, regrets, strategy_sum, state, sigma, utility,
                         total, node_at, next_action)
            if p == 0:
                value0 += v
            _post_update(g, regrets, p, t, plus, discount, alpha, beta)
        if discount_interval > 0 and t % discount_interval == 0 and t <= discount_until:
            k = t // discount_interval
            f = k / (k + 1.0)
            for j in range(regrets.shape[0]):
                regrets[j] *= f
                strategy_sum[j] *= f
    return value0


@kernel
def _draw_deal(cumulative: F64, n_deals: int, state: I64) -> int:
    """One deal: from ``cumulative`` (the enumerated deals' distribution), or uniformly
    among ``n_deals`` if ``cumulative`` is empty (a pool). Draws one number from ``state``."""
    u = _rng.uniform(state)
    if cumulative.shape[0] == 0:
        deal = int(u * n_deals)
        return n_deals - 1 if deal >= n_deals else deal
    return _sample_index(cumulative, u)


@kernel
def _cs_pass(
    g: KernelGame, deal: int, update_player: int, weight: float, regrets: F64,
    strategy_sum: F64, sigma: F64, reach: F64, value: F64, action_value: F64, node_at: I64,
    next_action: I64,
) -> float:
    """One chance-sampled CFR pass: vanilla CFR on the single ``deal``, chance weight 1.

    The deal was drawn from the deals' own distribution, so its sampling weight
    ``prob / prob`` is 1: regrets grow by the other players' reach times the action's
    advantage; the average by ``weight`` times the own reach times the current strategy.
    Every action of every player is explored; a row's current strategy is its regret
    matching, read when the walk enters it (each row is entered at most once per pass).
    ``reach[depth]`` and ``value[depth]`` are per-player frames; updates ``update_player``
    (everybody if -1). Returns position 0's value of the deal under the current strategy.
    """
    (player, rnd, num_actions, child_start, children, offset, _rows, terminal, term_set,
     term_payoff, _deal_prob, deal_bucket, deal_pattern) = g  # fmt: skip
    n_players = reach.shape[1]
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        p = player[node]
        k = num_actions[node]
        if a < 0:  # entering the node
            t = terminal[node]
            if t >= 0:
                s = term_set[t]
                pattern = 0 if s < 0 else deal_pattern[deal, s]
                for q in range(n_players):
                    value[depth, q] = term_payoff[t, pattern, q]
                depth -= 1
                continue
            live = False
            for q in range(n_players):
                value[depth, q] = 0.0
                if reach[depth, q] != 0.0:
                    live = True
            if not live:
                depth -= 1
                continue
            row = offset[node] + deal_bucket[deal, p, rnd[node]] * k
            _row_sigma(regrets, row, k, sigma, depth)
            a = 0
        else:  # child ``a`` is done: its values are in value[depth + 1]
            for q in range(n_players):
                value[depth, q] += sigma[depth, a] * value[depth + 1, q]
            action_value[depth, a] = value[depth + 1, p]
            a += 1
        if a < k:
            next_action[depth] = a
            for q in range(n_players):
                reach[depth + 1, q] = reach[depth, q]
            reach[depth + 1, p] *= sigma[depth, a]
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        if update_player < 0 or update_player == p:
            row = offset[node] + deal_bucket[deal, p, rnd[node]] * k
            cf = 1.0
            for q in range(n_players):
                if q != p:
                    cf *= reach[depth, q]
            own = weight * reach[depth, p]
            v = value[depth, p]
            for b in range(k):
                regrets[row + b] += cf * (action_value[depth, b] - v)
                strategy_sum[row + b] += own * sigma[depth, b]
        depth -= 1
    return float(value[0, 0])


@kernel
def _cs_run(
    g: KernelGame, iterations: int, t0: int, alternating: bool, plus: bool, discount: bool,
    alpha: float, beta: float, gamma: float, regrets: F64, strategy_sum: F64, state: I64,
    cumulative: F64, sigma: F64, reach: F64, value: F64, action_value: F64, node_at: I64,
    next_action: I64,
) -> float:
    """``iterations`` chance-sampled CFR iterations: alternating, one drawn deal per player's
    pass; simultaneous, one drawn deal and one pass for everybody. Returns the sum of
    position 0's sampled values (one per pass that updates position 0)."""
    n_deals = g[11].shape[0]
    n_players = reach.shape[1]
    passes = n_players if alternating else 1
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for j in range(passes):
            update = j if alternating else -1
            deal = _draw_deal(cumulative, n_deals, state)
            for q in range(n_players):
                reach[0, q] = 1.0
            v = _cs_pass(g, deal, update, weight, regrets, strategy_sum, sigma, reach, value,
                         action_value, node_at, next_action)
            if update <= 0:
                value0 += v
            _post_update(g, regrets, update, t, plus, discount, alpha, beta)
    return value0


@kernel
def _pure_pass(
    g: KernelGame, deal: int, traverser: int, weight: float, regrets: F64, strategy_sum: F64,
    state: I64, sigma: F64, utility: F64, chosen: I64, node_at: I64, next_action: I64,
) -> float:
    """One Pure CFR traversal for ``deal`` (Gibson 2014); returns the traverser's value.

    Every row the walk enters samples one action from its regret-matching strategy (a pure
    strategy profile, drawn on entry in depth-first order). The other players follow their
    sampled action and add ``weight`` to its average count. The traverser explores every
    action; its regrets grow by ``u(a) - u(sampled)`` and the node's value is
    ``u(sampled)``: with integer payoffs and weights, regrets and counts stay integers.
    """
    (player, rnd, num_actions, child_start, children, offset, _rows, terminal, term_set,
     term_payoff, _deal_prob, deal_bucket, deal_pattern) = g  # fmt: skip
    ret = 0.0
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        p = player[node]
        k = num_actions[node]
        if a < 0:  # entering the node
            t = terminal[node]
            if t >= 0:
                s = term_set[t]
                pattern = 0 if s < 0 else deal_pattern[deal, s]
                ret = term_payoff[t, pattern, traverser]
                depth -= 1
                continue
            row = offset[node] + deal_bucket[deal, p, rnd[node]] * k
            _row_sigma(regrets, row, k, sigma, depth)
            choice = _draw(sigma, depth, k, _rng.uniform(state))
            chosen[depth] = choice
            if p != traverser:
                strategy_sum[row + choice] += weight
                next_action[depth] = k  # on return, pass the child's value up
                node_at[depth + 1] = children[child_start[node] + choice]
                next_action[depth + 1] = -1
                depth += 1
                continue
            a = 0
        else:  # child ``a`` is done with value ``ret``
            if p != traverser:
                depth -= 1
                continue
            utility[depth, a] = ret
            a += 1
        if a < k:
            next_action[depth] = a
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        row = offset[node] + deal_bucket[deal, p, rnd[node]] * k
        v = utility[depth, chosen[depth]]
        for b in range(k):
            regrets[row + b] += utility[depth, b] - v
        ret = v
        depth -= 1
    return ret


@kernel
def _pure_run(
    g: KernelGame, iterations: int, t0: int, plus: bool, discount: bool, alpha: float,
    beta: float, gamma: float, regrets: F64, strategy_sum: F64, state: I64, cumulative: F64,
    sigma: F64, utility: F64, chosen: I64, node_at: I64, next_action: I64,
) -> float:
    """``iterations`` Pure CFR iterations (one traversal per player each, a deal drawn for
    each). Returns the sum of position 0's sampled traversal values."""
    n_deals = g[11].shape[0]
    n_players = g[11].shape[1]
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for p in range(n_players):
            deal = _draw_deal(cumulative, n_deals, state)
            v = _pure_pass(g, deal, p, weight, regrets, strategy_sum, state, sigma, utility,
                           chosen, node_at, next_action)
            if p == 0:
                value0 += v
            _post_update(g, regrets, p, t, plus, discount, alpha, beta)
    return value0


@kernel
def _normalise_or_regrets(num_actions: npt.NDArray[Any], offset: I64, rows: npt.NDArray[Any],
                          sums: F64, regrets: F64, out: F64) -> None:
    """Average strategy rows: ``sums`` normalised; rows with no sum use regret matching of
    ``regrets``, and uniform if those have no positive entry either."""
    for n in range(num_actions.shape[0]):
        k = num_actions[n]
        if k == 0:
            continue
        for b in range(rows[n]):
            s = offset[n] + b * k
            tot = 0.0
            for a in range(k):
                if sums[s + a] > 0.0:
                    tot += sums[s + a]
            src = sums
            if tot <= 0.0:
                src = regrets
                for a in range(k):
                    if regrets[s + a] > 0.0:
                        tot += regrets[s + a]
            for a in range(k):
                if tot > 0.0:
                    out[s + a] = src[s + a] / tot if src[s + a] > 0.0 else 0.0
                else:
                    out[s + a] = 1.0 / k


# --------------------------------------------------------------------------- the solver


def _identity(game: SolverGame) -> dict[str, Any]:
    """What a checkpoint must match: the game, both abstractions (and the pool) and the
    table size."""
    if isinstance(game, PoolGame):
        return game.identity()
    return {
        "game": format_gamedef(game.game),
        "game_fingerprint": game.game.fingerprint,
        "betting": game.betting.to_json(),
        "cards": dict(game.cards.spec),
        "table_len": game.table_size,
    }


class Solver:
    """The base solver: a game, behaviour flags, cumulative regrets and average strategy.

    Args:
        game: the flat abstract game (:func:`strategies.games.abstract.build_abstract_game`) or a
            pool game (:class:`strategies.solvers.dealpool.PoolGame`, external sampling or Pure
            CFR only).
        config: a :class:`SolverConfig` or a variant name (``cfr``, ``cfr+``, ``lcfr``,
            ``dcfr``, ``mccfr-es``, ``cfr-cs``, ``pure-cfr``, ``mccfr-es-pool``).
        seed: seeds the sampling generator (ignored by full-width variants, kept anyway).

    Raises:
        ValueError: for a pool game with a full-width configuration.
    """

    def __init__(
        self, game: SolverGame, config: SolverConfig | str = "cfr", *, seed: int = 0
    ) -> None:
        self.game = game
        self.config = solver_config(config)
        if isinstance(game, PoolGame) and self.config.sampling not in ("external", "pure"):
            raise UsageError(f"expected external sampling or Pure CFR for a deal pool, got solver "
                             f"{self.config.name!r}")
        self.seed = int(seed)
        self.iteration = 0
        """Iterations done so far."""
        self.seconds = 0.0
        """Wall time spent in :meth:`iterate` (carried over by checkpoints)."""
        self.value_sum = 0.0
        """External sampling: the sum of position 0's sampled traversal values (divide by
        :attr:`iteration` for a running estimate of its game value)."""
        size = game.table_size
        self.regrets = np.zeros(size)
        """Cumulative counterfactual regrets, in table layout."""
        self.strategy_sum = np.zeros(size)
        """Weighted sums of the current strategies (unnormalised average)."""
        self.rng_state = _rng.seed_state(self.seed)
        self._g = game.kernel_args()
        n, depth = game.num_players, game.max_depth + 2
        self._node_at = np.zeros(depth, dtype=np.int64)
        self._next_action = np.zeros(depth, dtype=np.int64)
        if self.config.sampling == "full":
            assert isinstance(game, AbstractGame)
            self._current = np.zeros(size)
            self._reach = np.zeros((depth, n, game.num_deals))
            self._value = np.zeros((depth, n, game.num_deals))
            self._action_value = np.zeros((depth, game.max_actions, game.num_deals))
        else:
            if isinstance(game, PoolGame):
                self._cumulative = np.empty(0)
            else:
                cumulative = np.cumsum(game.deal_prob)
                cumulative[-1] = 1.0
                self._cumulative = cumulative
            self._sigma = np.zeros((depth, game.max_actions))
            self._utility = np.zeros((depth, game.max_actions))
            self._total = np.zeros(depth)
            self._chosen = np.zeros(depth, dtype=np.int64)
            self._reach = np.zeros((depth, n))
            self._value = np.zeros((depth, n))
            self._action_value = np.zeros((depth, game.max_actions))

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels without iterating."""
        self._run(0)

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations.

        Raises:
            ValueError: if ``iterations`` is negative.
        """
        if iterations < 0:
            raise UsageError(f"expected a non-negative number of iterations, got {iterations}")
        if iterations == 0:
            return
        start = time.perf_counter()
        self.value_sum += self._run(iterations)
        self.iteration += iterations
        self.seconds += time.perf_counter() - start

    def _run(self, iterations: int) -> float:
        c = self.config
        if c.sampling == "full":
            _cfr_run(self._g, iterations, self.iteration, c.alternating, c.regret_plus,
                     c.discount, c.alpha, c.beta, c.gamma, self.regrets, self.strategy_sum,
                     self._current, self._reach, self._value, self._action_value,
                     self._node_at, self._next_action)
            return 0.0
        if c.sampling == "chance":
            return float(_cs_run(self._g, iterations, self.iteration, c.alternating,
                                 c.regret_plus, c.discount, c.alpha, c.beta, c.gamma,
                                 self.regrets, self.strategy_sum, self.rng_state,
                                 self._cumulative, self._sigma, self._reach, self._value,
                                 self._action_value, self._node_at, self._next_action))
        if c.sampling == "pure":
            return float(_pure_run(self._g, iterations, self.iteration, c.regret_plus,
                                   c.discount, c.alpha, c.beta, c.gamma, self.regrets,
                                   self.strategy_sum, self.rng_state, self._cumulative,
                                   self._sigma, self._utility, self._chosen, self._node_at,
                                   self._next_action))
        return float(_es_run(self._g, iterations, self.iteration, c.regret_plus, c.discount,
                             c.alpha, c.beta, c.gamma, c.discount_interval, c.discount_until,
                             self.regrets, self.strategy_sum, self.rng_state,
                             self._cumulative, self._sigma, self._utility, self._total,
                             self._node_at, self._next_action))

    def current_strategy(self) -> F64:
        """The regret-matching strategy the next iteration would play (table layout)."""
        out = np.empty(self.game.table_size)
        _regret_matching(self._g, self.regrets, out, -1)
        return out

    def average_strategy(self) -> F64:
        """The average strategy: the solver's output, in strategy-file table layout."""
        game = self.game
        if isinstance(game, PoolGame):
            out = np.empty(game.table_size)
            f = game.flat
            _normalise_or_regrets(f.num_actions, f.offset,
                                  np.asarray(f.layout.rows, dtype=np.int64),
                                  self.strategy_sum, self.regrets, out)
            return out
        return normalise_rows(game, self.strategy_sum)

    # ----------------------------------------------------------------- checkpoints

    def save_checkpoint(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write the solver state to ``path`` (``.npz``, atomically); return the path.

        ``extra`` is JSON-able metadata stored alongside (e.g. the recipe name).
        """
        header = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            **_identity(self.game),
            "config": self.config.to_json(),
            "seed": self.seed,
            "iteration": self.iteration,
            "seconds": self.seconds,
            "value_sum": self.value_sum,
            "extra": extra or {},
        }
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_npz(target, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                  regrets=self.regrets, strategy_sum=self.strategy_sum,
                  rng_state=self.rng_state)
        return target

    @classmethod
    def load_checkpoint(cls, path: str | Path, game: SolverGame) -> Solver:
        """Resume a solver from :meth:`save_checkpoint` for the same game and abstractions
        (and the same pool).

        Raises:
            CheckpointError: if the file is unreadable, corrupt, or for another game,
                abstraction, pool or table size.
        """
        source = str(path)
        try:
            data = np.load(path, allow_pickle=False)
            if not isinstance(data, NpzFile):
                raise UsageError("not an .npz archive")
            with data:
                arrays = {key: np.array(data[key]) for key in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise CheckpointError(f"{source}: cannot read checkpoint: {exc}") from None
        for key in ("header", "regrets", "strategy_sum", "rng_state"):
            if key not in arrays:
                raise CheckpointError(f"{source}: corrupt checkpoint: missing {key!r}")
        try:
            header = json.loads(arrays["header"].astype(np.uint8).tobytes().decode())
            if not isinstance(header, dict):
                raise UsageError("the header is not an object")
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        kind = (header.get("format"), header.get("version"))
        if kind not in ((CHECKPOINT_FORMAT, 1), (CHECKPOINT_FORMAT, CHECKPOINT_VERSION),
                        (_OLD_POOL_FORMAT, 1)):
            raise CheckpointError(
                f"{source}: expected a {CHECKPOINT_FORMAT} version {CHECKPOINT_VERSION}, got "
                f"{header.get('format')!r} version {header.get('version')!r}"
            )
        for key, value in _identity(game).items():
            if header.get(key) != value:
                what = "game" if key.startswith("game") else key
                raise CheckpointError(
                    f"{source}: checkpoint is for another {what}: expected {value!r}, "
                    f"got {header.get(key)!r}"
                )
        try:
            config = SolverConfig.from_json(dict(header["config"]))
            solver = Solver(game, config, seed=int(header["seed"]))
            solver.iteration = int(header["iteration"])
            solver.seconds = float(header["seconds"])
            solver.value_sum = float(header.get("value_sum", 0.0))
            state = _rng.check_state(arrays["rng_state"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        for key in ("regrets", "strategy_sum"):
            arr = arrays[key]
            if arr.shape != (game.table_size,) or arr.dtype != np.float64:
                raise CheckpointError(
                    f"{source}: corrupt checkpoint: expected {key} of {game.table_size} "
                    f"float64 values, got {arr.dtype} {arr.shape}"
                )
            if not np.isfinite(arr).all():
                raise CheckpointError(f"{source}: corrupt checkpoint: {key} is not finite")
        if solver.iteration < 0:
            raise CheckpointError(f"{source}: corrupt checkpoint: iteration {solver.iteration}")
        solver.regrets = np.ascontiguousarray(arrays["regrets"])
        solver.strategy_sum = np.ascontiguousarray(arrays["strategy_sum"])
        solver.rng_state = np.ascontiguousarray(state)
        return solver


class CFRSolver(Solver):
    """Vanilla CFR (alternating updates, uniform averaging)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["cfr"], seed=seed)


class CFRPlusSolver(Solver):
    """CFR+: regret matching+, alternating updates, linear averaging."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["cfr+"], seed=seed)


class DCFRSolver(Solver):
    """Discounted CFR with parameters ``alpha``, ``beta``, ``gamma`` (defaults 1.5, 0, 2)."""

    def __init__(
        self, game: AbstractGame, *, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
        seed: int = 0,
    ) -> None:
        config = SolverConfig("dcfr", discount=True, alpha=alpha, beta=beta, gamma=gamma)
        super().__init__(game, config, seed=seed)


class LinearCFRSolver(Solver):
    """Linear CFR: DCFR(1, 1, 1)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["lcfr"], seed=seed)


class ExternalSamplingSolver(Solver):
    """External-sampling MCCFR (regret matching, uniform averaging; seeded)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["mccfr-es"], seed=seed)


class ChanceSampledSolver(Solver):
    """Chance-sampled CFR (one drawn deal per pass, alternating, uniform averaging; seeded)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["cfr-cs"], seed=seed)


class PureCFRSolver(Solver):
    """Pure CFR (sampled pure strategy profiles, integer regrets and counts; seeded)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["pure-cfr"], seed=seed)
