"""The re-solver's numba kernels: CFR+ over a public tree, vectorised over private hands.

Arrays are those of :class:`agent.resolve.tree.PublicTree`; strategies, regrets and averages
are ``[hand, edge]`` (a node's row for one hand is contiguous, so regret matching is
:func:`agent.strategy.kernels.match_row`, the one copy the offline solvers run too); reaches
are ``[node, player, hand]`` and values ``[node, hand]``.

* :func:`forward`: both players' reach of every node under a strategy (a chance edge zeroes
  the hands its cards block).
* :func:`backward`: one player's counterfactual values of every node, following the
  strategy, or best-responding at that player's free nodes (``best``).
* :func:`cfr_plus`: iterations of CFR+ (alternating updates, regrets floored at 0,
  averages weighted by the iteration number) with the gadget at the root
  (:mod:`agent.resolve.gadgets` describes them): ``GADGET_UNSAFE`` (the opponent's root
  reach fixed), ``GADGET_RESOLVE`` (per hand, the opponent takes its alternative value or
  enters), ``GADGET_MAXMARGIN`` (the opponent picks the hand with the smallest margin; the
  reach variant is the same gadget with the gifts added to the alternative values).

Terminal values (:func:`terminal`) are ``scale * sum_j compat[b, i, j] * reach_opp[j] *
payoff`` over the opponent's hands ``j`` that share no card with ``i`` or the board, computed
in time linear in the hands (per-card sums of reach; a showdown sweeps the hands sorted by
strength), so that a hold'em river (1,081 hands) costs what 1,081 Leduc hands would, not
their square. Every kernel has a pure-Python twin in
``tests/agent/resolve/oracle.py``; the tests also run these with ``NUMBA_DISABLE_JIT=1``.

Imports numpy, numba, :mod:`agent.jit` and :mod:`agent.strategy.kernels`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agent.jit import kernel
from agent.strategy.kernels import match_row

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
I8 = npt.NDArray[np.int8]
B = npt.NDArray[np.bool_]

GADGET_UNSAFE, GADGET_RESOLVE, GADGET_MAXMARGIN = 0, 1, 2


@kernel
def forward(kind: I8, player: I64, child_start: I64, num_children: I64, children: I64,
            board_of: I64, valid: F64, strategy: F64, reach: F64) -> None:
    """``reach[n, p, h]`` for every node, from ``reach[0]`` (set by the caller). A decision
    node's children are filled hand by hand (a hand's row of ``strategy`` is contiguous)."""
    n_hands = reach.shape[2]
    for n in range(kind.shape[0]):
        k = kind[n]
        if k < 2:
            continue
        s = child_start[n]
        m = num_children[n]
        if k == 2:
            p = player[n]
            for h in range(n_hands):
                mine = reach[n, p, h]
                other = reach[n, 1 - p, h]
                for a in range(m):
                    c = children[s + a]
                    reach[c, p, h] = mine * strategy[h, s + a]
                    reach[c, 1 - p, h] = other
        else:
            for a in range(m):
                c = children[s + a]
                b = board_of[c]
                for q in range(2):
                    for h in range(n_hands):
                        reach[c, q, h] = reach[n, q, h] * valid[b, h]


@kernel
def terminal(n: int, u: int, kind: I8, board_of: I64, spent: I64, folder: I64, valid: F64,
             hole: I64, strength: I64, order: I64, scale: float, reach_opp: F64,
             out: F64) -> None:
    """Player ``u``'s counterfactual values at terminal ``n`` (module docstring), in time
    linear in the hands: per-card sums of the opponent's reach remove the hands that share
    a card (inclusion-exclusion: a hand of at most two cards shares both with itself only),
    and a showdown sweeps the hands in ``order`` (by strength) once up and once down."""
    n_hands = out.shape[0]
    b = board_of[n]
    cards = np.zeros(64)
    if kind[n] == 0:
        pay = float(spent[n, 1 - u]) if folder[n] != u else -float(spent[n, u])
        total = 0.0
        for j in range(n_hands):
            if valid[b, j] > 0.0:
                r = reach_opp[j]
                total += r
                for k in range(hole.shape[1]):
                    if hole[j, k] >= 0:
                        cards[hole[j, k]] += r
        for i in range(n_hands):
            if valid[b, i] <= 0.0:
                out[i] = 0.0
                continue
            blocked = 0.0
            held = 0
            for k in range(hole.shape[1]):
                if hole[i, k] >= 0:
                    blocked += cards[hole[i, k]]
                    held += 1
            blocked -= (held - 1) * reach_opp[i]
            out[i] = scale * pay * (total - blocked)
        return
    win = float(spent[n, 1 - u])
    lose = float(spent[n, u])
    for i in range(n_hands):
        out[i] = 0.0
    # upward: every hand wins against the weaker hands it shares no card with
    total = 0.0
    lo = 0
    while lo < n_hands:
        i = order[b, lo]
        s = strength[b, i]
        hi = lo
        while hi < n_hands and strength[b, order[b, hi]] == s:
            hi += 1
        if s >= 0:
            for g in range(lo, hi):
                h = order[b, g]
                acc = total
                for k in range(hole.shape[1]):
                    if hole[h, k] >= 0:
                        acc -= cards[hole[h, k]]
                out[h] += win * acc
            for g in range(lo, hi):
                h = order[b, g]
                r = reach_opp[h]
                total += r
                for k in range(hole.shape[1]):
                    if hole[h, k] >= 0:
                        cards[hole[h, k]] += r
        lo = hi
    # downward: and loses against the stronger ones
    for c in range(64):
        cards[c] = 0.0
    total = 0.0
    hi = n_hands
    while hi > 0:
        i = order[b, hi - 1]
        s = strength[b, i]
        lo = hi
        while lo > 0 and strength[b, order[b, lo - 1]] == s:
            lo -= 1
        if s >= 0:
            for g in range(lo, hi):
                h = order[b, g]
                acc = total
                for k in range(hole.shape[1]):
                    if hole[h, k] >= 0:
                        acc -= cards[hole[h, k]]
                out[h] -= lose * acc
            for g in range(lo, hi):
                h = order[b, g]
                r = reach_opp[h]
                total += r
                for k in range(hole.shape[1]):
                    if hole[h, k] >= 0:
                        cards[hole[h, k]] += r
        hi = lo
    for i in range(n_hands):
        out[i] *= scale


@kernel
def backward(u: int, best: bool, kind: I8, player: I64, child_start: I64,
             num_children: I64, children: I64, board_of: I64, valid: F64, spent: I64,
             folder: I64, chance_weight: F64, perm_start: I64, perm_count: I64, perms: I64,
             hole: I64, strength: I64, order: I64, scale: float, frozen: B, strategy: F64,
             reach: F64, values: F64) -> None:
    """``values[n, h]``: player ``u``'s counterfactual values (opponent reach from
    ``reach``), following ``strategy`` or, with ``best``, maximising at ``u``'s nodes that
    are not ``frozen``. A chance edge that stands for a suit class of boards
    (``perm_count`` > 0: :attr:`agent.resolve.tree.PublicTree.perms`) adds its child's
    values once per board of the class, permuted into that board's frame."""
    n_hands = values.shape[1]
    for n in range(kind.shape[0] - 1, -1, -1):
        k = kind[n]
        if k < 2:
            terminal(n, u, kind, board_of, spent, folder, valid, hole, strength, order,
                     scale, reach[n, 1 - u], values[n])
            continue
        s = child_start[n]
        m = num_children[n]
        for h in range(n_hands):
            values[n, h] = 0.0
        if k == 3:
            w = chance_weight[n]
            for a in range(m):
                c = children[s + a]
                b = board_of[c]
                count = perm_count[s + a]
                if count == 0:
                    for h in range(n_hands):
                        values[n, h] += w * valid[b, h] * values[c, h]
                else:  # a suit class: each of its boards, the child's values permuted
                    for q in range(perm_start[s + a], perm_start[s + a] + count):
                        for h in range(n_hands):
                            j = perms[q, h]
                            values[n, h] += w * valid[b, j] * values[c, j]
        elif player[n] != u:
            for h in range(n_hands):
                v = 0.0
                for a in range(m):
                    v += values[children[s + a], h]
                values[n, h] = v
        elif best and not frozen[n]:
            for h in range(n_hands):
                top = values[children[s], h]
                for a in range(1, m):
                    top = max(top, values[children[s + a], h])
                values[n, h] = top
        else:
            for h in range(n_hands):
                v = 0.0
                for a in range(m):
                    v += strategy[h, s + a] * values[children[s + a], h]
                values[n, h] = v


@kernel
def match_all(kind: I8, player: I64, child_start: I64, num_children: I64, frozen: B,
              only: int, regrets: F64, strategy: F64) -> None:
    """Current strategy of every free decision node (of player ``only``, or all if -1).
    Hand by hand over flat views (a hand's rows are contiguous; no view per row)."""
    n_hands = regrets.shape[0]
    width = regrets.shape[1]
    flat_regrets = regrets.reshape(n_hands * width)
    flat_strategy = strategy.reshape(n_hands * width)
    nodes = np.zeros(kind.shape[0], np.int64)
    count = 0
    for n in range(kind.shape[0]):
        if kind[n] == 2 and not frozen[n] and (only < 0 or player[n] == only):
            nodes[count] = n
            count += 1
    for h in range(n_hands):
        base = h * width
        for i in range(count):
            n = nodes[i]
            match_row(flat_regrets, base + child_start[n], num_children[n], flat_strategy)


@kernel
def update(u: int, t: float, kind: I8, player: I64, child_start: I64, num_children: I64,
           children: I64, frozen: B, strategy: F64, reach: F64, values: F64, regrets: F64,
           average: F64) -> None:
    """CFR+ step for player ``u`` after :func:`backward`: regrets (floored at 0) and the
    average strategy weighted by ``t`` and ``u``'s reach."""
    n_hands = values.shape[1]
    for n in range(kind.shape[0]):
        if kind[n] != 2 or player[n] != u or frozen[n]:
            continue
        s = child_start[n]
        m = num_children[n]
        for h in range(n_hands):
            here = values[n, h]
            weight = t * reach[n, u, h]
            for a in range(m):
                r = regrets[h, s + a] + values[children[s + a], h] - here
                regrets[h, s + a] = r if r > 0.0 else 0.0
                average[h, s + a] += weight * strategy[h, s + a]


@kernel
def gadget_strategy(gadget: int, regrets: F64, fixed: F64, live: F64, out: F64) -> None:
    """The opponent's root reach from the gadget's regrets: ``fixed`` (unsafe), the enter
    probability per hand (re-solve: ``regrets[0]`` alternative, ``regrets[1]`` enter) or a
    distribution over the ``live`` hands (maxmargin)."""
    n = out.shape[0]
    if gadget == 0:
        for h in range(n):
            out[h] = fixed[h]
    elif gadget == 1:
        for h in range(n):
            a = regrets[0, h] if regrets[0, h] > 0.0 else 0.0
            e = regrets[1, h] if regrets[1, h] > 0.0 else 0.0
            out[h] = live[h] * (e / (a + e) if a + e > 0.0 else 0.5)
    else:
        total = 0.0
        count = 0.0
        for h in range(n):
            if live[h] > 0.0:
                count += 1.0
                if regrets[0, h] > 0.0:
                    total += regrets[0, h]
        for h in range(n):
            if live[h] <= 0.0:
                out[h] = 0.0
            elif total > 0.0:
                out[h] = regrets[0, h] / total if regrets[0, h] > 0.0 else 0.0
            else:
                out[h] = 1.0 / count


@kernel
def gadget_update(gadget: int, t: float, root_values: F64, alternative: F64, live: F64,
                  regrets: F64, average: F64, current: F64) -> None:
    """The gadget's CFR+ step, after the opponent's :func:`backward` (``root_values``: its
    counterfactual values of entering; ``alternative``: CBV plus gift)."""
    n = root_values.shape[0]
    if gadget == 1:
        for h in range(n):
            if live[h] <= 0.0:
                continue
            enter = current[h]
            v = enter * root_values[h] + (1.0 - enter) * alternative[h]
            r0 = regrets[0, h] + alternative[h] - v
            r1 = regrets[1, h] + root_values[h] - v
            regrets[0, h] = r0 if r0 > 0.0 else 0.0
            regrets[1, h] = r1 if r1 > 0.0 else 0.0
            average[h] += t * enter
    elif gadget == 2:
        v = 0.0
        for h in range(n):
            if live[h] > 0.0:
                v += current[h] * (root_values[h] - alternative[h])
        for h in range(n):
            if live[h] > 0.0:
                r = regrets[0, h] + root_values[h] - alternative[h] - v
                regrets[0, h] = r if r > 0.0 else 0.0
                average[h] += t * current[h]


@kernel
def cfr_plus(first: int, count: int, agent: int, gadget: int, kind: I8, player: I64,
             child_start: I64, num_children: I64, children: I64, board_of: I64, valid: F64,
             spent: I64, folder: I64, chance_weight: F64, perm_start: I64, perm_count: I64,
             perms: I64, hole: I64, strength: I64,
             order: I64, scale: float, frozen: B, agent_root: F64, opp_fixed: F64, alternative: F64,
             live: F64, strategy: F64, regrets: F64, average: F64, gadget_regrets: F64,
             gadget_average: F64, reach: F64, values: F64, opp_root: F64) -> None:
    """Iterations ``first + 1 .. first + count`` of CFR+ with the gadget (module
    docstring). ``strategy`` holds the frozen nodes' fixed rows on entry (kept)."""
    opp = 1 - agent
    for it in range(first + 1, first + count + 1):
        t = float(it)
        # the agent's update against the opponent's current strategy and gadget
        gadget_strategy(gadget, gadget_regrets, opp_fixed, live, opp_root)
        match_all(kind, player, child_start, num_children, frozen, -1, regrets, strategy)
        reach[0, agent] = agent_root
        reach[0, opp] = opp_root
        forward(kind, player, child_start, num_children, children, board_of, valid,
                strategy, reach)
        backward(agent, False, kind, player, child_start, num_children, children, board_of,
                 valid, spent, folder, chance_weight, perm_start, perm_count, perms, hole,
                 strength, order, scale, frozen, strategy, reach, values)
        update(agent, t, kind, player, child_start, num_children, children, frozen,
               strategy, reach, values, regrets, average)
        # the opponent's update against the agent's new strategy
        match_all(kind, player, child_start, num_children, frozen, agent, regrets, strategy)
        forward(kind, player, child_start, num_children, children, board_of, valid,
                strategy, reach)
        backward(opp, False, kind, player, child_start, num_children, children, board_of,
                 valid, spent, folder, chance_weight, perm_start, perm_count, perms, hole,
                 strength, order, scale, frozen, strategy, reach, values)
        update(opp, t, kind, player, child_start, num_children, children, frozen,
               strategy, reach, values, regrets, average)
        gadget_update(gadget, t, values[0], alternative, live, gadget_regrets,
                      gadget_average, opp_root)
