"""One subgame, one gadget, solved by CFR+: :func:`solve` and its :class:`Solution`.

A :class:`Subgame` is a public tree (:class:`agent.resolve.tree.PublicTree`, rooted at the
subgame's root) with what the root needs: the agent's reach of every private hand (its
range, unnormalised), the opponent's blueprint reach (its range), the opponent's
counterfactual best-response values against the blueprint (``cbv``), its gifts (what it
gave up on the way in; reach variants) and the frozen nodes (the agent's own earlier
decisions in the subgame, held at what it really played). Values are counterfactual, in
chips per hand of the whole game (``scale`` folds in the chance probability of the root's
cards).

The gadgets (the opponent's side of the root; Brown and Sandholm 2017, Burch et al. 2014):

* ``unsafe``: the opponent enters with its blueprint range; the subgame is solved as is.
* ``resolve`` (CFR-D's re-solving gadget): per hand ``h``, the opponent chooses between its
  alternative value ``cbv[h]`` and entering the subgame (its reach into the subgame is its
  choice alone); the agent need only keep each hand's value at or below ``cbv[h]``.
* ``maxmargin``: the opponent chooses *which* hand to enter with, paid ``v[h] - cbv[h]``:
  the agent maximises the smallest margin ``cbv[h] - v[h]``.
* ``reach-maxmargin``: as maxmargin with ``cbv[h] + gift[h]``: value the opponent gave up
  earlier on the way to the subgame (against the blueprint) may be spent here.

A depth-limited subgame (:mod:`agent.resolve.depth`) also holds the rows of both players
under its leaves (``continuation``): CFR+ keeps them fixed (frozen nodes of either player),
the opponent's choice at each leaf is learned like any of its decisions, and the
exploitability estimate's best responses keep them too (the gadget game is the one solved).

Only *live* hands play the gadget: hands the root's board does not block and that meet at
least one agent hand with positive reach (a hand with no counterfactual weight has value 0
whatever the agent does).

The accuracy estimate (:attr:`Solution.exploitability`) is the gadget game's exploitability
of the average strategies: what a best-responding opponent (gadget included) gains over the
value it gets when the agent best-responds to the opponent's average, ``>= 0`` and 0 at an
equilibrium of the gadget game; it falls with the budget.

Imports numpy, numba (through :mod:`agent.resolve.kernels`) and :mod:`agent.resolve.tree`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import UsageError
from agent.resolve import kernels as K
from agent.resolve.tree import DECISION, PublicTree

F64 = npt.NDArray[np.float64]

GADGETS: tuple[str, ...] = ("unsafe", "resolve", "maxmargin", "reach-maxmargin")
"""The gadgets, by name."""
GADGET_CODES = {"unsafe": K.GADGET_UNSAFE, "resolve": K.GADGET_RESOLVE,
                "maxmargin": K.GADGET_MAXMARGIN, "reach-maxmargin": K.GADGET_MAXMARGIN}
CHUNK = 16
"""Iterations between two looks at the clock under a time budget."""
MAX_ITERATIONS = 1_000_000


def parse_gadget(name: str) -> str:
    """A gadget name (:data:`GADGETS`).

    Raises:
        UsageError: for anything else.
    """
    key = str(name).strip().lower()
    if key not in GADGETS:
        raise UsageError(f"expected a gadget ({', '.join(GADGETS)}), got {name!r}")
    return key


@dataclass(eq=False)
class Subgame:
    """A subgame and its root (module docstring)."""

    tree: PublicTree
    agent: int
    """The agent's seat."""
    agent_reach: F64
    opp_reach: F64
    cbv: F64
    gift: F64
    scale: float
    frozen: Mapping[int, F64] = field(default_factory=dict)
    """Agent decision nodes held fixed: ``[hand, k]`` rows."""
    continuation: F64 | None = None
    """A depth-limited tree's (:attr:`agent.resolve.tree.PublicTree.depth_limited`)
    ``[hand, edge]`` rows of every decision under its leaves, both players', held fixed
    (:func:`agent.resolve.depth.continuation_strategy`); None for a tree without leaves."""
    _live: F64 | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.tree.hands)
        for name in ("agent_reach", "opp_reach", "cbv", "gift"):
            arr = np.ascontiguousarray(getattr(self, name), dtype=np.float64)
            if arr.shape != (n,) or not np.all(np.isfinite(arr)):
                raise UsageError(f"expected {name} as {n} finite values, got shape "
                                 f"{arr.shape}")
            setattr(self, name, arr)
        if self.agent not in (0, 1):
            raise UsageError(f"expected the agent's seat 0 or 1, got {self.agent!r}")
        tree = self.tree
        for node, rows in self.frozen.items():
            k = int(tree.num_children[node])
            if tree.kind[node] != DECISION or tree.player[node] != self.agent or \
                    np.shape(rows) != (n, k):
                raise UsageError(f"expected frozen rows [{n}, {k}] at an agent node, got "
                                 f"{np.shape(rows)} at node {node}")
        if tree.depth_limited != (self.continuation is not None):
            raise UsageError("expected continuation rows exactly for a depth-limited tree")
        if self.continuation is not None:
            cont = np.ascontiguousarray(self.continuation, dtype=np.float64)
            if cont.shape != (n, tree.num_edges) or not np.all(np.isfinite(cont)):
                raise UsageError(f"expected continuation rows [{n}, {tree.num_edges}], got "
                                 f"shape {cont.shape}")
            self.continuation = cont

    def fixed(self) -> tuple[npt.NDArray[np.bool_], F64]:
        """The frozen nodes (the agent's earlier decisions and the continuations) and a
        ``[hand, edge]`` strategy holding their rows (0 elsewhere)."""
        tree = self.tree
        frozen = np.zeros(tree.num_nodes, np.bool_)
        strategy = np.zeros((len(tree.hands), tree.num_edges))
        if self.continuation is not None:
            frozen |= tree.continuation_nodes()
            strategy[:] = self.continuation
            strategy[:, ~frozen[tree.edge_nodes()]] = 0.0
        for node, rows in self.frozen.items():
            frozen[node] = True
            s = int(tree.child_start[node])
            strategy[:, s: s + int(tree.num_children[node])] = rows
        return frozen, strategy

    @property
    def root_board(self) -> int:
        return int(self.tree.board_of[0])

    def live(self) -> F64:
        """1 for the opponent's live hands (module docstring), else 0 (computed once: a
        product of the root board's hands x hands compatibility with the agent's reach)."""
        if self._live is None:
            b = self.root_board
            weight = self.tree.compat[b] @ self.agent_reach
            self._live = ((self.tree.valid[b] > 0) & (weight > 0)).astype(np.float64)
        return self._live

    def alternative(self, gadget: str) -> F64:
        """The opponent's alternative values: ``cbv`` (plus ``gift`` for reach variants)."""
        return self.cbv + self.gift if gadget.startswith("reach-") else self.cbv.copy()


@dataclass(frozen=True)
class Solution:
    """A solved subgame."""

    gadget: str
    strategy: F64
    """``[hand, edge]``: both players' average strategies (frozen rows as given)."""
    opp_root: F64
    """The opponent's average root reach under the gadget."""
    iterations: int
    seconds: float
    exploitability: float
    """The gadget game's exploitability (module docstring), chips per hand."""
    root_mass: float
    """The agent's probability of reaching the root, the opponent taken to hold any hand
    (the weight of the root's counterfactual values: a per-visit figure divides by it)."""
    min_margin: float
    """``min(cbv[h] + gift[h] - v*[h])`` over live hands, ``v*`` the opponent's best response
    to the agent's average (negative: some hand gains over its alternative)."""

    @property
    def relative_exploitability(self) -> float:
        """:attr:`exploitability` per visit of the root (chips per hand that reaches it)."""
        return self.exploitability / self.root_mass if self.root_mass > 0 else 0.0


def evaluate(tree: PublicTree, u: int, best: bool, strategy: F64, root_reach: tuple[F64, F64],
             scale: float, frozen: npt.NDArray[np.bool_] | None = None) -> F64:
    """``values[node, hand]``: player ``u``'s counterfactual values (best responding at its
    unfrozen nodes when ``best``) with both players' root reach ``root_reach``."""
    n_hands = len(tree.hands)
    reach = np.zeros((tree.num_nodes, 2, n_hands))
    reach[0, 0] = root_reach[0]
    reach[0, 1] = root_reach[1]
    strategy = np.ascontiguousarray(strategy, dtype=np.float64)
    K.forward(tree.kind, tree.player, tree.child_start, tree.num_children, tree.children,
              tree.board_of, tree.valid, strategy, reach)
    values = np.zeros((tree.num_nodes, n_hands))
    if frozen is None:
        frozen = np.zeros(tree.num_nodes, np.bool_)
    K.backward(u, best, tree.kind, tree.player, tree.child_start, tree.num_children,
               tree.children, tree.board_of, tree.valid, tree.spent, tree.folder,
               tree.chance_weight, tree.perm_start, tree.perm_count, tree.perms, tree.hole,
               tree.strength, tree.order, float(scale), frozen,
               strategy, reach, values)
    return values


def reaches(tree: PublicTree, strategy: F64, root_reach: tuple[F64, F64]) -> F64:
    """``reach[node, player, hand]`` under ``strategy``."""
    reach = np.zeros((tree.num_nodes, 2, len(tree.hands)))
    reach[0, 0] = root_reach[0]
    reach[0, 1] = root_reach[1]
    K.forward(tree.kind, tree.player, tree.child_start, tree.num_children, tree.children,
              tree.board_of, tree.valid, np.ascontiguousarray(strategy, dtype=np.float64),
              reach)
    return reach


def _normalise(tree: PublicTree, average: F64, fixed: F64, frozen: npt.NDArray[np.bool_]
               ) -> F64:
    out = fixed.copy()
    for n in np.flatnonzero(tree.kind == DECISION):
        if frozen[n]:
            continue
        s = int(tree.child_start[n])
        m = int(tree.num_children[n])
        block = average[:, s: s + m]
        total = block.sum(axis=1, keepdims=True)
        out[:, s: s + m] = np.where(total > 0, block / np.where(total > 0, total, 1.0),
                                    1.0 / m)
    return out


def solve(sub: Subgame, gadget: str, iterations: int, seconds: float | None = None) -> Solution:
    """CFR+ on ``sub`` with ``gadget`` for ``iterations`` iterations, or until ``seconds``
    have passed (checked every :data:`CHUNK` iterations; at least one chunk runs). The
    iterations are deterministic; under a time budget how many ran is reported.

    Raises:
        UsageError: for an unknown gadget or a bad budget.
    """
    gadget = parse_gadget(gadget)
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise UsageError(f"expected 1 to {MAX_ITERATIONS} iterations, got {iterations!r}")
    if seconds is not None and not seconds > 0:
        raise UsageError(f"expected a positive time budget, got {seconds!r}")
    start = time.perf_counter()
    tree = sub.tree
    n_hands = len(tree.hands)
    agent = sub.agent
    code = GADGET_CODES[gadget]
    frozen, strategy = sub.fixed()
    fixed = strategy.copy()
    regrets = np.zeros((n_hands, tree.num_edges))
    average = np.zeros((n_hands, tree.num_edges))
    g_regrets = np.zeros((2, n_hands))
    g_average = np.zeros(n_hands)
    reach = np.zeros((tree.num_nodes, 2, n_hands))
    values = np.zeros((tree.num_nodes, n_hands))
    opp_root = np.zeros(n_hands)
    live = sub.live()
    alternative = sub.alternative(gadget)
    opp_fixed = sub.opp_reach * tree.valid[sub.root_board]
    done = 0
    while done < iterations:
        count = min(iterations - done, CHUNK if seconds is not None else iterations)
        K.cfr_plus(done, count, agent, code, tree.kind, tree.player, tree.child_start,
                   tree.num_children, tree.children, tree.board_of, tree.valid, tree.spent,
                   tree.folder, tree.chance_weight, tree.perm_start, tree.perm_count,
                   tree.perms, tree.hole, tree.strength, tree.order,
                   float(sub.scale),
                   frozen, sub.agent_reach, opp_fixed, alternative, live, strategy, regrets,
                   average, g_regrets, g_average, reach, values, opp_root)
        done += count
        if seconds is not None and time.perf_counter() - start >= seconds:
            break
    final = _normalise(tree, average, fixed, frozen)
    if code == K.GADGET_UNSAFE:
        opp_avg = opp_fixed
    elif code == K.GADGET_RESOLVE:
        weight = done * (done + 1) / 2
        opp_avg = g_average / weight
    else:
        total = g_average.sum()
        opp_avg = g_average / total if total > 0 else live / max(live.sum(), 1.0)
    elapsed = time.perf_counter() - start
    expl, mass, margin = gadget_exploitability(sub, gadget, final, opp_avg, frozen)
    return Solution(gadget, final, opp_avg, done, elapsed, expl, mass, margin)


def gadget_exploitability(sub: Subgame, gadget: str, strategy: F64, opp_root: F64,
                          frozen: npt.NDArray[np.bool_] | None = None
                          ) -> tuple[float, float, float]:
    """``(exploitability, root mass, min margin)`` of ``strategy`` in the gadget game
    (module docstring); ``opp_root``: the opponent's gadget choice (its root reach)."""
    gadget = parse_gadget(gadget)
    tree = sub.tree
    agent, opp = sub.agent, 1 - sub.agent
    live = sub.live()
    alt = sub.alternative(gadget)
    ones = tree.valid[sub.root_board].copy()

    def pair(a: F64, o: F64) -> tuple[F64, F64]:
        return (a, o) if agent == 0 else (o, a)

    # a depth limit's continuations are held by both players (the opponent's choice is
    # the leaf's, among them); frozen agent nodes do not bind the opponent's best response
    held = sub.tree.continuation_nodes()
    v_opp = evaluate(tree, opp, True, strategy, pair(sub.agent_reach, ones), sub.scale,
                     held)[0]
    w_agent = evaluate(tree, agent, True, strategy, pair(ones, opp_root), sub.scale,
                       held if frozen is None else frozen | held)[0]
    agent_value = float(sub.agent_reach @ w_agent)
    if gadget == "unsafe":
        best = float(sub.opp_reach * tree.valid[sub.root_board] @ v_opp)
        worst = -agent_value
    elif gadget == "resolve":
        best = float(np.sum(live * np.maximum(alt, v_opp)))
        worst = float(np.sum(live * (1.0 - opp_root) * alt)) - agent_value
    else:
        idx = live > 0
        best = float(np.max((v_opp - alt)[idx])) if idx.any() else 0.0
        worst = -agent_value - float(np.sum(opp_root * alt))
    mass = float(sub.scale * (sub.agent_reach @ tree.compat[sub.root_board] @ ones))
    idx = live > 0
    margin = float(np.min((alt - v_opp)[idx])) if idx.any() else 0.0
    return max(best - worst, 0.0), mass, margin
