"""The solver kernels: the one public module of CFR's compiled building blocks.

Every solver of :mod:`strategies.solvers` (and the graft, learned-size and pool
configurations of :class:`strategies.solvers.cfr.Solver`) runs these; no other module
defines a CFR pass. All are :func:`agent.jit.kernel` functions over flat arrays that mutate
preallocated outputs; the game is one :class:`~strategies.games.abstract.KernelGame` (a
named tuple of the flat tree, its terminal payoffs and its chance, built by
:func:`strategies.games.abstract.kernel_game`).

* :func:`regret_matching`, :func:`row_sigma`: current strategies from regrets (every row,
  or one row into a per-depth frame); :func:`match_row`, one row, lives in
  :mod:`agent.strategy.kernels` (the live agent's re-solver runs it too) and is re-exported
  here.
* :func:`post_update`: after a pass, discount (DCFR) and floor (RM+) the updated rows.
* :func:`cfr_pass`, :func:`cfr_run`: full-width CFR vectorised over the enumerated deals
  (frozen entries held at fixed values: strategy grafting).
* :func:`es_pass`, :func:`es_run`: external-sampling MCCFR over enumerated deals or a deal
  pool, with optional frozen rows (chance nodes playing fixed values: hold'em grafting).
* :func:`cs_pass`, :func:`cs_run`: chance-sampled CFR; :func:`pure_pass`,
  :func:`pure_run`: Pure CFR.
* :func:`draw`, :func:`draw_deal`, :func:`sample_index`: the draws (from
  :mod:`strategies.solvers.rng`).
* :func:`normalise_or_regrets`: average rows, falling back to regret matching.
* The excessive gap technique (:mod:`strategies.solvers.egt`) over the two treeplexes of
  the sequence form: :func:`treeplex_prox` (the dilated-entropy prox mapping, a softmax
  bottom-up), :func:`treeplex_best_response`, :func:`treeplex_realise`,
  :func:`csr_matvec` (``A y``, ``A' x``), :func:`treeplex_gap` and :func:`egt_gap_values`
  (the excessive gap condition), :func:`egt_advance` (the steps with the aggressive
  smoothing schedule and backtracking, as a machine that stops for each product with ``A``)
  and :func:`egt_run` (its driver with ``A`` in CSR).

The algorithms, their flags and the oracles that check them are described in
:mod:`strategies.solvers.cfr`. The kernels walk the tree depth first with an explicit stack
(per-depth frames), not recursion: numba's on-disk cache crashes when it reloads
self-recursive functions (numba issue #6061).

Imports numpy, numba, :mod:`agent.jit` and :mod:`strategies`; never imported by
:mod:`agent`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from agent.jit import inline_kernel, kernel
from agent.strategy.kernels import match_row
from strategies.games.abstract import KernelGame
from strategies.solvers import rng

__all__ = [
    "EGT_DONE",
    "EGT_G",
    "EGT_IN",
    "EGT_ROWS",
    "EGT_STUCK",
    "NO_FROZEN",
    "NO_INDEX",
    "NO_VALUES",
    "KernelGame",
    "cfr_pass",
    "cfr_run",
    "cs_pass",
    "cs_run",
    "csr_matvec",
    "draw",
    "draw_deal",
    "egt_advance",
    "egt_gap_values",
    "egt_run",
    "es_pass",
    "es_run",
    "match_row",
    "normalise_or_regrets",
    "post_update",
    "pure_pass",
    "pure_run",
    "regret_matching",
    "row_sigma",
    "sample_index",
    "treeplex_best_response",
    "treeplex_gap",
    "treeplex_prox",
    "treeplex_realise",
]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
NO_FROZEN: B = np.zeros(0, dtype=np.bool_)
"""The empty frozen mask: no frozen rows (:func:`es_pass`)."""
NO_INDEX: I64 = np.zeros(0, dtype=np.int64)
"""The empty frozen index: no frozen entries (:func:`cfr_run`)."""
NO_VALUES: F64 = np.zeros(0)
"""No fixed values (with :data:`NO_FROZEN` or :data:`NO_INDEX`)."""


@kernel
def regret_matching(g: KernelGame, regrets: F64, out: F64, only_player: int) -> None:
    """Current strategy of every row (of ``only_player``, or all if -1) from its regrets."""
    player, offset, rows, num_actions = g.player, g.offset, g.rows, g.num_actions
    for n in range(len(offset)):
        if offset[n] < 0 or (only_player >= 0 and player[n] != only_player):
            continue
        k = num_actions[n]
        for b in range(rows[n]):
            match_row(regrets, offset[n] + b * k, k, out)


@kernel
def regret_matching_table(regrets: F64, offset: npt.NDArray[Any], rows: npt.NDArray[Any],
                          num_actions: npt.NDArray[Any], out: F64) -> None:
    """:func:`regret_matching` over a table layout's arrays (every node with actions), for
    solvers whose game is not a :class:`KernelGame` (Royal's public tree)."""
    for n in range(len(offset)):
        k = num_actions[n]
        if k == 0 or offset[n] < 0:
            continue
        for b in range(rows[n]):
            match_row(regrets, offset[n] + b * k, k, out)


@kernel
def post_update(
    g: KernelGame, regrets: F64, only_player: int, t: int, plus: bool, discount: bool,
    alpha: float, beta: float,
) -> None:
    """After a pass: discount (DCFR) and floor (RM+) the regrets of the updated rows."""
    if not plus and not discount:
        return
    player, offset, rows, num_actions = g.player, g.offset, g.rows, g.num_actions
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
def cfr_pass(
    g: KernelGame, update_player: int, weight: float, current: F64, regrets: F64,
    strategy_sum: F64, reach: F64, value: F64, action_value: F64, node_at: I64, next_action: I64,
) -> None:
    """One full-width pass over the tree, vectorised over deals (depth-first, no recursion).

    ``reach[0]`` (players x deals) holds the root's reach; ``reach[depth]`` and
    ``value[depth]`` are the frames of the node at that depth on the current path. The
    expected payoff of every player for every deal ends in ``value[0]``. Updates the
    regrets and average of ``update_player`` (every player if -1).
    """
    player, rnd, num_actions, child_start, children = (g.player, g.round, g.num_actions,
                                                        g.child_start, g.children)
    offset, terminal, term_set, term_payoff = g.offset, g.terminal, g.term_set, g.term_payoff
    deal_prob = g.deal_prob
    deal_bucket, deal_pattern = g.deal_bucket, g.deal_pattern
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
def cfr_run(
    g: KernelGame, iterations: int, t0: int, alternating: bool, plus: bool, discount: bool,
    alpha: float, beta: float, gamma: float, frozen_index: I64, frozen_value: F64,
    regrets: F64, strategy_sum: F64, current: F64, reach: F64, value: F64,
    action_value: F64, node_at: I64, next_action: I64,
) -> None:
    """``iterations`` full-width iterations numbered ``t0 + 1, ...``; the entries
    ``frozen_index`` of the current strategy are held at ``frozen_value`` in every pass
    (frozen rows; both empty for none)."""
    n_players = reach.shape[1]
    passes = n_players if alternating else 1
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for j in range(passes):
            update = j if alternating else -1
            regret_matching(g, regrets, current, -1)
            for j in range(len(frozen_index)):
                current[frozen_index[j]] = frozen_value[j]
            reach[0, :, :] = 1.0
            cfr_pass(g, update, weight, current, regrets, strategy_sum, reach, value,
                      action_value, node_at, next_action)
            post_update(g, regrets, update, t, plus, discount, alpha, beta)


@kernel
def sample_index(cumulative: F64, u: float) -> int:
    """The first index whose cumulative probability exceeds ``u`` (the last if none)."""
    for i in range(len(cumulative)):
        if u < cumulative[i]:
            return i
    return len(cumulative) - 1


@inline_kernel
def row_sigma(regrets: F64, row: int, k: int, sigma: F64, depth: int) -> None:
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
def draw(sigma: F64, depth: int, k: int, u: float) -> int:
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
def es_pass(
    g: KernelGame, deal: int, traverser: int, weight: float, regrets: F64, strategy_sum: F64,
    frozen: B, fixed: F64, state: I64, sigma: F64, utility: F64, total: F64, node_at: I64,
    next_action: I64,
) -> float:
    """One external-sampling traversal for ``deal``; returns the traverser's value.

    Depth-first without recursion: at the traverser's nodes every action is explored, at
    the others' one action is drawn from their current strategy (after adding it to their
    average), in the order a recursive traversal would draw them. Frozen rows (``frozen``
    per table entry, or empty for none) are chance nodes playing ``fixed``: one action
    drawn, for either traverser, no regret or average update.
    """
    player, rnd, num_actions, child_start, children = (g.player, g.round, g.num_actions,
                                                        g.child_start, g.children)
    offset, terminal, term_set, term_payoff = g.offset, g.terminal, g.term_set, g.term_payoff
    deal_bucket, deal_pattern = g.deal_bucket, g.deal_pattern
    any_frozen = frozen.shape[0] > 0
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
            chance = any_frozen and frozen[row]
            if chance:
                for b in range(k):
                    sigma[depth, b] = fixed[row + b]
            else:
                row_sigma(regrets, row, k, sigma, depth)
            if chance or p != traverser:
                if not chance:
                    for b in range(k):
                        strategy_sum[row + b] += weight * sigma[depth, b]
                choice = draw(sigma, depth, k, rng.uniform(state))
                next_action[depth] = k  # on return, pass the child's value up
                node_at[depth + 1] = children[child_start[node] + choice]
                next_action[depth + 1] = -1
                depth += 1
                continue
            total[depth] = 0.0
            a = 0
        else:  # child ``a`` is done with value ``ret``
            if a >= k:  # a chance or opponent node: pass the child's value up
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
def es_run(
    g: KernelGame, iterations: int, t0: int, plus: bool, discount: bool, alpha: float,
    beta: float, gamma: float, discount_interval: int, discount_until: int, regrets: F64,
    strategy_sum: F64, frozen: B, fixed: F64, state: I64, cumulative: F64, sigma: F64,
    utility: F64, total: F64, node_at: I64, next_action: I64,
) -> float:
    """``iterations`` external-sampling iterations (one traversal per player each).

    A deal is drawn from ``cumulative`` (the enumerated deals' distribution), or uniformly
    from the ``deal_bucket`` rows if ``cumulative`` is empty (a pool). ``frozen``/``fixed``:
    see :func:`es_pass`. Returns the sum of position 0's sampled traversal values, a cheap
    running estimate of its game value.
    """
    n_deals = g.deal_bucket.shape[0]
    n_players = g.deal_bucket.shape[1]
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for p in range(n_players):
            deal = draw_deal(cumulative, n_deals, state)
            v = es_pass(g, deal, p, weight, regrets, strategy_sum, frozen, fixed, state, sigma,
                        utility, total, node_at, next_action)
            if p == 0:
                value0 += v
            post_update(g, regrets, p, t, plus, discount, alpha, beta)
        if discount_interval > 0 and t % discount_interval == 0 and t <= discount_until:
            k = t // discount_interval
            f = k / (k + 1.0)
            for j in range(regrets.shape[0]):
                regrets[j] *= f
                strategy_sum[j] *= f
    return value0


@kernel
def draw_deal(cumulative: F64, n_deals: int, state: I64) -> int:
    """One deal: from ``cumulative`` (the enumerated deals' distribution), or uniformly
    among ``n_deals`` if ``cumulative`` is empty (a pool). Draws one number from ``state``."""
    u = rng.uniform(state)
    if cumulative.shape[0] == 0:
        deal = int(u * n_deals)
        return n_deals - 1 if deal >= n_deals else deal
    return sample_index(cumulative, u)


@kernel
def cs_pass(
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
    player, rnd, num_actions, child_start, children = (g.player, g.round, g.num_actions,
                                                        g.child_start, g.children)
    offset, terminal, term_set, term_payoff = g.offset, g.terminal, g.term_set, g.term_payoff
    deal_bucket, deal_pattern = g.deal_bucket, g.deal_pattern
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
            row_sigma(regrets, row, k, sigma, depth)
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
def cs_run(
    g: KernelGame, iterations: int, t0: int, alternating: bool, plus: bool, discount: bool,
    alpha: float, beta: float, gamma: float, regrets: F64, strategy_sum: F64, state: I64,
    cumulative: F64, sigma: F64, reach: F64, value: F64, action_value: F64, node_at: I64,
    next_action: I64,
) -> float:
    """``iterations`` chance-sampled CFR iterations: alternating, one drawn deal per player's
    pass; simultaneous, one drawn deal and one pass for everybody. Returns the sum of
    position 0's sampled values (one per pass that updates position 0)."""
    n_deals = g.deal_bucket.shape[0]
    n_players = reach.shape[1]
    passes = n_players if alternating else 1
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for j in range(passes):
            update = j if alternating else -1
            deal = draw_deal(cumulative, n_deals, state)
            for q in range(n_players):
                reach[0, q] = 1.0
            v = cs_pass(g, deal, update, weight, regrets, strategy_sum, sigma, reach, value,
                         action_value, node_at, next_action)
            if update <= 0:
                value0 += v
            post_update(g, regrets, update, t, plus, discount, alpha, beta)
    return value0


@kernel
def pure_pass(
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
    player, rnd, num_actions, child_start, children = (g.player, g.round, g.num_actions,
                                                        g.child_start, g.children)
    offset, terminal, term_set, term_payoff = g.offset, g.terminal, g.term_set, g.term_payoff
    deal_bucket, deal_pattern = g.deal_bucket, g.deal_pattern
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
            row_sigma(regrets, row, k, sigma, depth)
            choice = draw(sigma, depth, k, rng.uniform(state))
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
def pure_run(
    g: KernelGame, iterations: int, t0: int, plus: bool, discount: bool, alpha: float,
    beta: float, gamma: float, regrets: F64, strategy_sum: F64, state: I64, cumulative: F64,
    sigma: F64, utility: F64, chosen: I64, node_at: I64, next_action: I64,
) -> float:
    """``iterations`` Pure CFR iterations (one traversal per player each, a deal drawn for
    each). Returns the sum of position 0's sampled traversal values."""
    n_deals = g.deal_bucket.shape[0]
    n_players = g.deal_bucket.shape[1]
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        weight = float(t) ** gamma
        for p in range(n_players):
            deal = draw_deal(cumulative, n_deals, state)
            v = pure_pass(g, deal, p, weight, regrets, strategy_sum, state, sigma, utility,
                           chosen, node_at, next_action)
            if p == 0:
                value0 += v
            post_update(g, regrets, p, t, plus, discount, alpha, beta)
    return value0


@kernel
def normalise_or_regrets(num_actions: npt.NDArray[Any], offset: I64, rows: npt.NDArray[Any],
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


# --------------------------------------------------------------------------- treeplexes (EGT)
#
# A player's treeplex (sequence form) as flat arrays, information sets in bottom-up order
# (every information set before the one holding its parent sequence): ``seq0[j]`` the first
# of its ``k[j]`` consecutive action sequences, ``parent[j]`` the sequence leading to it
# (0 = the empty sequence), ``weight[j]`` its weight in the dilated entropy
# ``d(x) = sum_j weight[j] * x[parent[j]] * sum_a b_ja log b_ja`` (``b`` the behaviour
# probabilities ``x[seq0[j] + a] / x[parent[j]]``). :mod:`strategies.solvers.egt` builds them.


@kernel
def treeplex_prox(seq0: I64, k: I64, parent: I64, weight: F64, g: F64, mu: float,
                  prior: F64, use_prior: bool, logb: F64, acc: F64) -> float:
    """``max_x <g, x> - mu d(x) + mu <grad d(c), x>`` over the treeplex (the last term only
    with ``use_prior``; ``c`` the centre whose log behaviour probabilities are ``prior``).

    Bottom-up: at each information set the local problem is a softmax, ``b_a`` proportional
    to ``c_a exp(v_a / (mu w))`` with ``v_a`` the sequence's gradient plus the values of the
    information sets below it, and its value ``mu w log sum_a c_a exp(v_a / (mu w))`` joins
    the parent sequence's gradient. Writes the maximiser's log behaviour probabilities into
    ``logb`` (per sequence; ``acc`` is scratch of the same length) and returns the maximum.
    ``mu > 0``.
    """
    for s in range(g.shape[0]):
        acc[s] = g[s]
    for j in range(seq0.shape[0]):
        s0 = seq0[j]
        c = mu * weight[j]
        top = -np.inf
        for a in range(k[j]):
            u = acc[s0 + a] / c
            if use_prior:
                u += prior[s0 + a]
            logb[s0 + a] = u
            if u > top:
                top = u
        total = 0.0
        for a in range(k[j]):
            total += np.exp(logb[s0 + a] - top)
        lse = top + np.log(total)
        for a in range(k[j]):
            logb[s0 + a] -= lse
        acc[parent[j]] += c * lse
    return float(acc[0])


@kernel
def treeplex_best_response(seq0: I64, k: I64, parent: I64, g: F64, acc: F64) -> float:
    """``max_x <g, x>`` over the treeplex (a best response's value; ``acc`` scratch)."""
    for s in range(g.shape[0]):
        acc[s] = g[s]
    for j in range(seq0.shape[0]):
        s0 = seq0[j]
        top = acc[s0]
        for a in range(1, k[j]):
            if acc[s0 + a] > top:
                top = acc[s0 + a]
        acc[parent[j]] += top
    return float(acc[0])


@kernel
def treeplex_realise(seq0: I64, k: I64, parent: I64, logb: F64, out: F64) -> None:
    """The realisation plan of the behaviour strategy ``exp(logb)`` (top-down)."""
    out[0] = 1.0
    for j in range(seq0.shape[0] - 1, -1, -1):
        s0 = seq0[j]
        for a in range(k[j]):
            out[s0 + a] = out[parent[j]] * np.exp(logb[s0 + a])


@kernel
def csr_matvec(indptr: I64, indices: I64, data: F64, v: F64, scale: float, out: F64) -> None:
    """``out = scale * M v`` for the CSR matrix ``M``."""
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            total += data[e] * v[indices[e]]
        out[i] = scale * total


@kernel
def treeplex_gap(seq0_x: I64, k_x: I64, par_x: I64, w_x: F64, seq0_y: I64, k_y: I64,
                 par_y: I64, w_y: F64, ay: F64, atx: F64, mu_x: float, mu_y: float,
                 d_x: float, d_y: float, scratch_x: F64, scratch_y: F64) -> tuple[float, float]:
    """The smoothed values of the excessive gap condition ``f(y) <= phi(x)`` from the two
    products ``ay = A y`` and ``atx = A' x`` (``atx`` is negated in place):
    ``f = max_x' x'Ay - mu_x dbar_x(x')`` and ``phi = min_y' x'Ay' + mu_y dbar_y(y')`` with
    ``dbar = d - min d`` (``d_x``, ``d_y`` the ranges ``-min d``). ``scratch_*``: ``[2, n]``."""
    for s in range(atx.shape[0]):
        atx[s] = -atx[s]
    f = treeplex_prox(seq0_x, k_x, par_x, w_x, ay, mu_x, scratch_x[0], False, scratch_x[0],
                      scratch_x[1]) - mu_x * d_x
    phi = -(treeplex_prox(seq0_y, k_y, par_y, w_y, atx, mu_y, scratch_y[0], False,
                          scratch_y[0], scratch_y[1]) - mu_y * d_y)
    return f, phi


@kernel
def egt_gap_values(seq0_x: I64, k_x: I64, par_x: I64, w_x: F64, seq0_y: I64, k_y: I64,
                   par_y: I64, w_y: F64, a_ptr: I64, a_idx: I64, a_val: F64, at_ptr: I64,
                   at_idx: I64, at_val: F64, x: F64, y: F64, mu_x: float, mu_y: float,
                   d_x: float, d_y: float) -> tuple[float, float]:
    """:func:`treeplex_gap` of ``(x, y)`` with ``A`` and ``A'`` in CSR."""
    nx, ny = x.shape[0], y.shape[0]
    gx, gy = np.empty(nx), np.empty(ny)
    csr_matvec(a_ptr, a_idx, a_val, y, 1.0, gx)
    csr_matvec(at_ptr, at_idx, at_val, x, 1.0, gy)
    return treeplex_gap(seq0_x, k_x, par_x, w_x, seq0_y, k_y, par_y, w_y, gx, gy, mu_x, mu_y,
                        d_x, d_y, np.empty((2, nx)), np.empty((2, ny)))


EGT_ROWS = 7
"""Rows of each player's work array of :func:`egt_advance`: ``[G, IN, NEW, P1, LB1, LB2,
ACC]``."""
EGT_G, EGT_IN = 0, 1
"""Rows of :func:`egt_advance`'s work arrays: a product's output and its input."""
_G, _IN, _NEW, _P1, _LB1, _LB2, _ACC = EGT_G, EGT_IN, 2, 3, 4, 5, 6
EGT_DONE = -1
""":func:`egt_advance`: the iterations asked for are done."""
EGT_STUCK = -2
""":func:`egt_advance`: ``tau`` fell below ``tau_min`` (the iterates are the last accepted)."""


@kernel
def egt_advance(iterations: int, seq0_x: I64, k_x: I64, par_x: I64, w_x: F64, seq0_y: I64,
                k_y: I64, par_y: I64, w_y: F64, x: F64, y: F64, state: F64, counts: I64,
                control: I64, work_x: F64, work_y: F64) -> int:
    """The excessive gap technique's steps as a machine that stops for every product with
    ``A``, so that one definition of the step serves every way of computing the products
    (a sparse matrix: :func:`egt_run`; a walk of a public tree:
    :mod:`strategies.solvers.royal`).

    Returns a request, 0 or 1, or :data:`EGT_DONE` / :data:`EGT_STUCK`. Request 0: the
    caller writes ``A v`` into ``work_x[G]`` with ``v = work_y[IN]``; request 1: ``A' v``
    into ``work_y[G]`` with ``v = work_x[IN]``; then calls again with the same arguments.
    ``state`` = ``[mu_x, mu_y, tau, d_x, d_y, tau_min]``; ``counts`` = ``[steps,
    backtracks, shrinks of mu_x, shrinks of mu_y]``; ``control`` = ``[phase, side,
    steps accepted in this run]`` (zeros to start; zeros again when it returns
    ``EGT_DONE`` or ``EGT_STUCK``); ``work_*``: ``[EGT_ROWS, n]`` scratch (:data:`EGT_ROWS`).

    One step shrinks the smoothing of the *side* ``p`` with the larger ``mu`` (balancing),
    ``o`` the other side; a side's gain gradient is ``A y`` for x (the maximiser) and
    ``-A' x`` for y; ``br_q(g, mu) = argmax <g, q> - mu d_q(q)`` (:func:`treeplex_prox`)::

        p1 = br_p(gain_p(o), mu_p);  ph = (1 - tau) p + tau p1;  oh = br_o(gain_o(ph), mu_o)
        p2 = argmax <tau / (1 - tau) gain_p(oh), q> - mu_p D_p(q, p1)   (Bregman step)
        p' = (1 - tau) p + tau p2;  o' = (1 - tau) o + tau oh;  mu_p' = (1 - tau) mu_p

    then the excessive gap condition at ``(x', y')`` (:func:`treeplex_gap`): if it holds the
    step is accepted, otherwise undone and retried with ``tau`` halved (the aggressive
    scheme with backtracking; ``tau`` is never raised). Five products per try.
    """
    while True:
        phase = int(control[0])
        side = int(control[1])
        tau = state[2]
        if side == 0:
            seq0_p, k_p, par_p, w_p, p, work_p = seq0_x, k_x, par_x, w_x, x, work_x
            seq0_o, k_o, par_o, w_o, o, work_o = seq0_y, k_y, par_y, w_y, y, work_y
        else:
            seq0_p, k_p, par_p, w_p, p, work_p = seq0_y, k_y, par_y, w_y, y, work_y
            seq0_o, k_o, par_o, w_o, o, work_o = seq0_x, k_x, par_x, w_x, x, work_x
        sign_p = 1.0 if side == 0 else -1.0
        mu_p, mu_o = state[side], state[1 - side]
        if phase == 0:  # a new try: the gain of p against o
            if control[2] >= iterations:
                control[0] = control[1] = control[2] = 0
                return EGT_DONE
            side = 0 if state[0] >= state[1] else 1
            control[1] = side
            control[0] = 1
            other = y if side == 0 else x
            work = work_y if side == 0 else work_x
            for s in range(other.shape[0]):
                work[_IN, s] = other[s]
            return side
        if phase == 1:  # p1 and ph; the gain of o against ph
            for s in range(p.shape[0]):
                work_p[_G, s] *= sign_p
            treeplex_prox(seq0_p, k_p, par_p, w_p, work_p[_G], mu_p, work_p[_LB1], False,
                          work_p[_LB1], work_p[_ACC])
            treeplex_realise(seq0_p, k_p, par_p, work_p[_LB1], work_p[_P1])
            for s in range(p.shape[0]):
                work_p[_IN, s] = (1.0 - tau) * p[s] + tau * work_p[_P1, s]
            control[0] = 2
            return 1 - side
        if phase == 2:  # oh; the gain of p against oh
            for s in range(o.shape[0]):
                work_o[_G, s] *= -sign_p
            treeplex_prox(seq0_o, k_o, par_o, w_o, work_o[_G], mu_o, work_o[_LB1], False,
                          work_o[_LB1], work_o[_ACC])
            treeplex_realise(seq0_o, k_o, par_o, work_o[_LB1], work_o[_NEW])
            for s in range(o.shape[0]):
                work_o[_IN, s] = work_o[_NEW, s]
            control[0] = 3
            return side
        if phase == 3:  # p2, the new iterates; A y'
            scale = sign_p * tau / (1.0 - tau)
            for s in range(p.shape[0]):
                work_p[_G, s] *= scale
            treeplex_prox(seq0_p, k_p, par_p, w_p, work_p[_G], mu_p, work_p[_LB1], True,
                          work_p[_LB2], work_p[_ACC])
            treeplex_realise(seq0_p, k_p, par_p, work_p[_LB2], work_p[_P1])
            for s in range(p.shape[0]):
                work_p[_NEW, s] = (1.0 - tau) * p[s] + tau * work_p[_P1, s]
            for s in range(o.shape[0]):
                work_o[_NEW, s] = (1.0 - tau) * o[s] + tau * work_o[_NEW, s]
            for s in range(y.shape[0]):
                work_y[_IN, s] = work_y[_NEW, s]
            control[0] = 4
            return 0
        if phase == 4:  # A' x'
            for s in range(x.shape[0]):
                work_x[_IN, s] = work_x[_NEW, s]
            control[0] = 5
            return 1
        # phase 5: the excessive gap condition at (x', y')
        mu_x = (1.0 - tau) * state[0] if side == 0 else state[0]
        mu_y = state[1] if side == 0 else (1.0 - tau) * state[1]
        f, phi = treeplex_gap(seq0_x, k_x, par_x, w_x, seq0_y, k_y, par_y, w_y, work_x[_G],
                              work_y[_G], mu_x, mu_y, state[3], state[4], work_x[_LB1:_LB2 + 1],
                              work_y[_LB1:_LB2 + 1])
        control[0] = 0
        if f <= phi + 1e-12 * (1.0 + abs(f) + abs(phi)):
            for s in range(x.shape[0]):
                x[s] = work_x[_NEW, s]
            for s in range(y.shape[0]):
                y[s] = work_y[_NEW, s]
            state[0], state[1] = mu_x, mu_y
            counts[0] += 1
            counts[2 + side] += 1
            control[2] += 1
        else:
            state[2] = 0.5 * tau
            counts[1] += 1
            if state[2] < state[5]:
                control[0] = control[1] = control[2] = 0
                return EGT_STUCK


@kernel
def egt_run(iterations: int, seq0_x: I64, k_x: I64, par_x: I64, w_x: F64, seq0_y: I64,
            k_y: I64, par_y: I64, w_y: F64, a_ptr: I64, a_idx: I64, a_val: F64,
            at_ptr: I64, at_idx: I64, at_val: F64, x: F64, y: F64, state: F64,
            counts: I64) -> int:
    """``iterations`` accepted steps of :func:`egt_advance` with ``A`` and ``A'`` in CSR, in
    place. Returns 0, or 1 if ``tau`` fell below ``tau_min``."""
    control = np.zeros(3, dtype=np.int64)
    work_x, work_y = np.empty((EGT_ROWS, x.shape[0])), np.empty((EGT_ROWS, y.shape[0]))
    while True:
        request = egt_advance(iterations, seq0_x, k_x, par_x, w_x, seq0_y, k_y, par_y, w_y,
                              x, y, state, counts, control, work_x, work_y)
        if request == 0:
            csr_matvec(a_ptr, a_idx, a_val, work_y[_IN], 1.0, work_x[_G])
        elif request == 1:
            csr_matvec(at_ptr, at_idx, at_val, work_x[_IN], 1.0, work_y[_G])
        else:
            return 0 if request == EGT_DONE else 1
