"""Slow pure-Python oracles for :mod:`agent.resolve`: every gadget built by plain recursion.

Nothing here is vectorised: the game is walked once per pair of private hands (the agent's
and the opponent's), chance nodes deal card by card, and each gadget is written out as the
extensive-form game it is (Brown and Sandholm 2017):

* unsafe: chance deals the opponent's hand with its blueprint range;
* resolve: per opponent hand, a two-action node (take the alternative value, or enter);
* maxmargin / reach-maxmargin: one opponent node whose actions are its hands, each paying
  ``subgame value - alternative``.

A depth-limited subgame's continuations (:mod:`agent.resolve.depth`) are held fixed for both
players (:func:`held`); the leaf is an ordinary opponent decision.

:func:`cfr_plus` runs the same CFR+ schedule as :func:`agent.resolve.kernels.cfr_plus`
(alternating, the agent first, regrets floored at 0, averages weighted by ``t``);
:func:`exploitability` computes the gadget game's exploitability by explicit best responses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agent.resolve.gadgets import Subgame
from agent.resolve.tree import CHANCE, DECISION, TERMINAL_FOLD, PublicTree


def _cards_ok(tree: PublicTree, n: int, hand: int) -> bool:
    return bool(tree.valid[int(tree.board_of[n]), hand] > 0)


def _disjoint(tree: PublicTree, a: int, b: int) -> bool:
    return int(tree.hands.mask[a]) & int(tree.hands.mask[b]) == 0


def payoff(tree: PublicTree, n: int, u: int, hands: Sequence[int]) -> float:
    """Player ``u``'s chips at terminal ``n`` with ``hands[seat]``."""
    spent = tree.spent[n]
    if tree.kind[n] == TERMINAL_FOLD:
        return float(spent[1 - u]) if int(tree.folder[n]) != u else -float(spent[u])
    board = tree.boards[int(tree.board_of[n])]
    from agent.acpc.evaluator import rank_hand_fast
    mine = rank_hand_fast(list(tree.hands.cards[hands[u]]) + list(board))
    theirs = rank_hand_fast(list(tree.hands.cards[hands[1 - u]]) + list(board))
    if mine > theirs:
        return float(spent[1 - u])
    if mine < theirs:
        return -float(spent[u])
    return 0.0


def regret_match(regrets: Sequence[float]) -> list[float]:
    pos = [max(r, 0.0) for r in regrets]
    total = sum(pos)
    return [p / total for p in pos] if total > 0 else [1.0 / len(pos)] * len(pos)


def _children(tree: PublicTree, n: int) -> list[int]:
    s = int(tree.child_start[n])
    return [int(c) for c in tree.children[s: s + int(tree.num_children[n])]]


def walk(tree: PublicTree, n: int, hands: tuple[int, int], reach: list[float], chance: float,
         u: int, sigma: dict[tuple[int, int], list[float]], delta: np.ndarray,
         frozen: set[int], scale: float) -> float:
    """Player ``u``'s expected chips below ``n`` for this pair of hands; adds ``u``'s
    counterfactual regrets (weighted by the other's reach and chance) to ``delta``."""
    kind = int(tree.kind[n])
    if kind < 2:
        return scale * payoff(tree, n, u, hands)
    if kind == CHANCE:
        w = float(tree.chance_weight[n])
        total = 0.0
        for c in _children(tree, n):
            if _cards_ok(tree, c, hands[0]) and _cards_ok(tree, c, hands[1]):
                total += w * walk(tree, c, hands, reach, chance * w, u, sigma, delta, frozen,
                                  scale)
        return total
    p = int(tree.player[n])
    kids = _children(tree, n)
    probs = sigma[(n, hands[p])]
    vals = []
    for a, c in enumerate(kids):
        r = list(reach)
        r[p] *= probs[a]
        vals.append(walk(tree, c, hands, r, chance, u, sigma, delta, frozen, scale))
    v = sum(pr * x for pr, x in zip(probs, vals, strict=True))
    if p == u and n not in frozen:
        s = int(tree.child_start[n])
        for a in range(len(kids)):
            delta[hands[u], s + a] += reach[1 - u] * chance * (vals[a] - v)
    return v


def own_reach(tree: PublicTree, u: int, sigma: dict[tuple[int, int], list[float]],
              root: float, hand: int) -> dict[int, float]:
    """``{node: reach of u's hand}`` (own actions and card blocking only)."""
    out = {0: root}
    for n in range(tree.num_nodes):
        if n not in out or int(tree.kind[n]) < 2:
            continue
        for a, c in enumerate(_children(tree, n)):
            if int(tree.kind[n]) == CHANCE:
                out[c] = out[n] if _cards_ok(tree, c, hand) else 0.0
            elif int(tree.player[n]) == u:
                out[c] = out[n] * sigma[(n, hand)][a]
            else:
                out[c] = out[n]
    return out


def held(sub: Subgame) -> dict[int, np.ndarray]:
    """Every decision node held fixed, with its ``[hand, k]`` rows: the agent's frozen
    nodes and, in a depth-limited subgame, both players' nodes under the leaves."""
    tree = sub.tree
    out: dict[int, np.ndarray] = {}
    if sub.continuation is not None:
        for n in range(tree.num_nodes):
            if tree.kind[n] == DECISION and tree.under[n] >= 0:
                s = int(tree.child_start[n])
                out[n] = sub.continuation[:, s: s + int(tree.num_children[n])]
    out.update(sub.frozen)
    return out


def cfr_plus(sub: Subgame, gadget: str, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    """``(average strategy [hand, edge], opponent's average root reach)``."""
    tree = sub.tree
    agent, opp = sub.agent, 1 - sub.agent
    nh = len(tree.hands)
    b0 = int(tree.board_of[0])
    live = [h for h in range(nh) if tree.valid[b0, h] > 0 and any(
        sub.agent_reach[a] > 0 and _disjoint(tree, a, h) and tree.valid[b0, a] > 0
        for a in range(nh))]
    alt = sub.cbv + (sub.gift if gadget.startswith("reach-") else 0.0)
    decisions = [n for n in range(tree.num_nodes) if tree.kind[n] == DECISION]
    fixed = held(sub)
    frozen = set(fixed)
    regrets = {(n, h): [0.0] * int(tree.num_children[n]) for n in decisions for h in range(nh)}
    avg = np.zeros((nh, tree.num_edges))
    g_reg = {h: [0.0, 0.0] for h in live}  # resolve: [alternative, enter]
    m_reg = {h: 0.0 for h in live}          # maxmargin: one regret per hand
    g_avg = np.zeros(nh)
    pairs = [(a, h) for a in range(nh) for h in range(nh)
             if a != h and _disjoint(tree, a, h) and tree.valid[b0, a] > 0 and
             tree.valid[b0, h] > 0]

    def current() -> dict[tuple[int, int], list[float]]:
        out = {}
        for (n, h), r in regrets.items():
            if n in frozen:
                out[(n, h)] = [float(x) for x in fixed[n][h]]
            else:
                out[(n, h)] = regret_match(r)
        return out

    for it in range(1, iterations + 1):
        # the gadget's root reach for the opponent
        if gadget == "unsafe":
            q = [float(sub.opp_reach[h]) if tree.valid[b0, h] > 0 else 0.0 for h in range(nh)]
        elif gadget == "resolve":
            q = [0.0] * nh
            for h in live:
                a_, e_ = max(g_reg[h][0], 0.0), max(g_reg[h][1], 0.0)
                q[h] = e_ / (a_ + e_) if a_ + e_ > 0 else 0.5
        else:
            q = [0.0] * nh
            probs = regret_match([m_reg[h] for h in live]) if live else []
            for h, p in zip(live, probs, strict=True):
                q[h] = p
        sigma = current()
        for u in (agent, opp):
            if u == opp:
                sigma = {k: (v if k[0] in frozen or tree.player[k[0]] == opp else
                             (regret_match(regrets[k]))) for k, v in sigma.items()}
            delta = np.zeros((nh, tree.num_edges))
            root_vals = np.zeros(nh)
            for a, h in pairs:
                hands = (a, h) if agent == 0 else (h, a)
                reach = [0.0, 0.0]
                reach[agent] = float(sub.agent_reach[a])
                reach[opp] = q[h]
                v = walk(tree, 0, hands, reach, 1.0, u, sigma, delta, frozen, sub.scale)
                if u == opp:
                    root_vals[h] += reach[agent] * v
            for n in decisions:
                if tree.player[n] != u or n in frozen:
                    continue
                s = int(tree.child_start[n])
                for h in range(nh):
                    r = regrets[(n, h)]
                    for a in range(len(r)):
                        r[a] = max(r[a] + delta[h, s + a], 0.0)
            for h in range(nh):
                root = float(sub.agent_reach[h]) if u == agent else q[h]
                if tree.valid[b0, h] <= 0:
                    root = 0.0
                reach_of = own_reach(tree, u, sigma, root, h)
                for n in decisions:
                    if tree.player[n] != u or n in frozen:
                        continue
                    s = int(tree.child_start[n])
                    for a, pr in enumerate(sigma[(n, h)]):
                        avg[h, s + a] += it * reach_of.get(n, 0.0) * pr
            if u == opp:
                if gadget == "resolve":
                    for h in live:
                        e_ = q[h]
                        v = e_ * root_vals[h] + (1 - e_) * alt[h]
                        g_reg[h][0] = max(g_reg[h][0] + alt[h] - v, 0.0)
                        g_reg[h][1] = max(g_reg[h][1] + root_vals[h] - v, 0.0)
                        g_avg[h] += it * e_
                elif gadget != "unsafe":
                    v = sum(q[h] * (root_vals[h] - alt[h]) for h in live)
                    for h in live:
                        m_reg[h] = max(m_reg[h] + root_vals[h] - alt[h] - v, 0.0)
                        g_avg[h] += it * q[h]
    out = np.zeros((nh, tree.num_edges))
    for n in decisions:
        s = int(tree.child_start[n])
        m = int(tree.num_children[n])
        for h in range(nh):
            if n in frozen:
                out[h, s: s + m] = fixed[n][h]
                continue
            total = avg[h, s: s + m].sum()
            out[h, s: s + m] = avg[h, s: s + m] / total if total > 0 else 1.0 / m
    if gadget == "unsafe":
        root = np.array([sub.opp_reach[h] * tree.valid[b0, h] for h in range(nh)])
    elif gadget == "resolve":
        root = g_avg / (iterations * (iterations + 1) / 2)
    else:
        root = g_avg / g_avg.sum()
    return out, root


def best_value(tree: PublicTree, n: int, u: int, hand: int, weights: dict[int, float],
               strategy: np.ndarray, frozen: set[int], scale: float) -> float:
    """Player ``u``'s best-response counterfactual value with ``hand`` at ``n``, the other
    player's hands weighted by ``weights`` (their reach times chance)."""
    kind = int(tree.kind[n])
    if kind < 2:
        total = 0.0
        for o, w in weights.items():
            if w and _disjoint(tree, hand, o):
                hands = (hand, o) if u == 0 else (o, hand)
                total += w * scale * payoff(tree, n, u, hands)
        return total
    kids = _children(tree, n)
    if kind == CHANCE:
        w = float(tree.chance_weight[n])
        total = 0.0
        for c in kids:
            if not _cards_ok(tree, c, hand):
                continue
            sub_w = {o: x * w for o, x in weights.items() if _cards_ok(tree, c, o)}
            total += best_value(tree, c, u, hand, sub_w, strategy, frozen, scale)
        return total
    s = int(tree.child_start[n])
    if int(tree.player[n]) == u:
        vals = [best_value(tree, c, u, hand, weights, strategy, frozen, scale) for c in kids]
        if n in frozen:
            return float(sum(strategy[hand, s + a] * v for a, v in enumerate(vals)))
        return max(vals)
    total = 0.0
    for a, c in enumerate(kids):
        sub_w = {o: x * strategy[o, s + a] for o, x in weights.items()}
        total += best_value(tree, c, u, hand, sub_w, strategy, frozen, scale)
    return total


def exploitability(sub: Subgame, gadget: str, strategy: np.ndarray,
                   opp_root: np.ndarray) -> float:
    """The gadget game's exploitability of ``strategy`` (both players) and the opponent's
    gadget choice ``opp_root`` (:mod:`agent.resolve.gadgets`), by explicit recursion."""
    tree = sub.tree
    agent, opp = sub.agent, 1 - sub.agent
    nh = len(tree.hands)
    b0 = int(tree.board_of[0])
    both = {n for n in held(sub) if n not in sub.frozen}  # continuations: both players'
    frozen = set(sub.frozen) | both
    alt = sub.cbv + (sub.gift if gadget.startswith("reach-") else 0.0)
    ok = [h for h in range(nh) if tree.valid[b0, h] > 0]
    agent_w = {a: float(sub.agent_reach[a]) for a in ok}
    live = [h for h in ok if any(agent_w[a] > 0 and _disjoint(tree, a, h) for a in ok)]
    v_opp = {h: best_value(tree, 0, opp, h, {a: w for a, w in agent_w.items() if a != h},
                           strategy, both, sub.scale) for h in ok}
    opp_w = {h: float(opp_root[h]) for h in ok}
    agent_value = sum(agent_w[a] * best_value(tree, 0, agent, a, {h: w for h, w in opp_w.items()
                                                                  if h != a},
                                              strategy, frozen, sub.scale) for a in ok)
    if gadget == "unsafe":
        best = sum(float(sub.opp_reach[h]) * v_opp[h] for h in ok)
        worst = -agent_value
    elif gadget == "resolve":
        best = sum(max(alt[h], v_opp[h]) for h in live)
        worst = sum((1 - opp_w[h]) * alt[h] for h in live) - agent_value
    else:
        best = max(v_opp[h] - alt[h] for h in live)
        worst = -agent_value - sum(opp_w[h] * alt[h] for h in ok)
    return max(best - worst, 0.0)
