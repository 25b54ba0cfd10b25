"""Exact equilibria of small two-player zero-sum abstract games by the sequence-form LP.

The sequence form (Koller, Megiddo and von Stengel 1994): a player's strategy is the
realisation weight of each of its *sequences* (an information set, here a ``(node, bucket)``
row of the table, and one of its actions), ``x >= 0`` with ``E x = e`` (the empty sequence
weighs 1; an information set's actions sum to the weight of the sequence that leads to it).
With ``A[s0, s1]`` = the sum over deals and terminals reached by the sequence pair of
chance probability times position 0's payoff, the value of the game to position 0 is::

    max_x min_y x' A y  =  max { f' v : F' v <= A' x, E x = e, x >= 0 }

(the inner minimum replaced by its LP dual). The same LP for position 1 gives its
equilibrium strategy. The sequences are read from the flat arrays of any two-player
:class:`~strategies.games.abstract.AbstractGame` (Kuhn, Leduc, N-card Kuhn, its abstractions); the
abstraction must have perfect recall (every row is reached after the same own sequence in
every deal), which is checked.

scipy (the test extra) is imported when :func:`solve_lp` runs, not at import.

Imports numpy and :mod:`strategies.games.abstract`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import AcpcError, UsageError
from strategies.games.abstract import AbstractGame

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


class SequenceFormError(AcpcError, ValueError):
    """The game has no perfect recall, or the LP solver failed."""


@dataclass(frozen=True)
class SequenceForm:
    """Sequences, constraints and payoff matrix of a two-player abstract game."""

    parent: tuple[dict[int, int], dict[int, int]]
    """Per player: the sequence leading to each of its rows (row start index -> sequence;
    sequence 0 is the empty one, sequence ``1 + i`` is table index ``seq_index[p][i]``)."""
    seq_index: tuple[list[int], list[int]]
    """Per player: the table index (row start + action) of each non-empty sequence."""
    rows: I64
    cols: I64
    values: F64
    """``A`` sparse (coordinates, each pair once, by row then column): ``A[rows[i],
    cols[i]] = values[i]``, position 0's expected payoff contribution of the sequence pair
    (the pairs that reach a terminal; a dense ``A`` of a larger game would not fit)."""

    @property
    def shape(self) -> tuple[int, int]:
        """``A``'s shape: each player's sequences, the empty one included."""
        return len(self.seq_index[0]) + 1, len(self.seq_index[1]) + 1

    def sparse(self, orient: int = 0) -> Any:
        """``A`` as a scipy CSR matrix (``orient=1``: ``-A'``, position 1's payoff with its
        sequences as rows). scipy is imported here."""
        from scipy import sparse

        if orient == 0:
            return sparse.csr_matrix((self.values, (self.rows, self.cols)), shape=self.shape)
        return sparse.csr_matrix((-self.values, (self.cols, self.rows)),
                                 shape=self.shape[::-1])


def sequence_form(game: AbstractGame) -> SequenceForm:
    """Read the sequence form of ``game`` (see the module docstring).

    Raises:
        SequenceFormError: for a game without two players or without perfect recall.
    """
    if game.num_players != 2:
        raise UsageError(f"expected a 2-player game, got {game.num_players} players")
    seq_of: list[dict[int, int]] = [{}, {}]
    seq_index: tuple[list[int], list[int]] = ([], [])
    parent: tuple[dict[int, int], dict[int, int]] = ({}, {})

    def sequence(p: int, index: int) -> int:
        s = seq_of[p].get(index)
        if s is None:
            s = seq_of[p][index] = len(seq_index[p]) + 1
            seq_index[p].append(index)
        return s

    entries: dict[tuple[int, int], float] = {}
    for d in range(game.num_deals):
        prob = float(game.deal_prob[d])
        stack = [(0, 0, 0)]
        while stack:
            node, s0, s1 = stack.pop()
            t = int(game.terminal[node])
            if t >= 0:
                ts = int(game.term_set[t])
                pattern = 0 if ts < 0 else int(game.deal_pattern[d, ts])
                key = (s0, s1)
                entries[key] = entries.get(key, 0.0) + prob * float(game.term_payoff[t, pattern, 0])
                continue
            p = int(game.player[node])
            k = int(game.num_actions[node])
            row = int(game.offset[node]) + int(game.deal_bucket[d, p, int(game.round[node])]) * k
            own = s0 if p == 0 else s1
            known = parent[p].setdefault(row, own)
            if known != own:
                raise SequenceFormError(f"expected perfect recall: row {row} of position {p} "
                                        f"follows sequences {known} and {own}")
            first = int(game.child_start[node])
            for a in range(k):
                s = sequence(p, row + a)
                child = int(game.children[first + a])
                stack.append((child, s, s1) if p == 0 else (child, s0, s))
    pairs = sorted(entries)
    rows = np.array([a for a, _ in pairs], dtype=np.int64)
    cols = np.array([b for _, b in pairs], dtype=np.int64)
    values = np.array([entries[pair] for pair in pairs], dtype=np.float64)
    return SequenceForm(parent, seq_index, rows, cols, values)


def _constraints(form: SequenceForm, p: int, game: AbstractGame) -> tuple[Any, F64]:
    """``E`` (one row for the empty sequence, one per row of ``p``) and ``e``."""
    from scipy import sparse

    n = len(form.seq_index[p]) + 1
    rows_of = sorted(form.parent[p])
    data: list[float] = [1.0]
    ii: list[int] = [0]
    jj: list[int] = [0]
    seq_of = {index: s + 1 for s, index in enumerate(form.seq_index[p])}
    for r, start in enumerate(rows_of, start=1):
        node = _node_of(game, start)
        k = int(game.num_actions[node])
        for a in range(k):
            ii.append(r)
            jj.append(seq_of[start + a])
            data.append(1.0)
        ii.append(r)
        jj.append(form.parent[p][start])
        data.append(-1.0)
    matrix = sparse.csr_matrix((data, (ii, jj)), shape=(len(rows_of) + 1, n))
    rhs = np.zeros(len(rows_of) + 1)
    rhs[0] = 1.0
    return matrix, rhs


def _node_of(game: AbstractGame, index: int) -> int:
    """The decision node whose rows contain table index ``index``."""
    for node in np.flatnonzero(game.offset >= 0):
        start = int(game.offset[node])
        if start <= index < start + int(game.rows[node]) * int(game.num_actions[node]):
            return int(node)
    raise UsageError(f"expected a table index below {game.table_size}, got {index!r}")


@dataclass(frozen=True)
class LPSolution:
    """The game value to position 0 and an equilibrium table (both players' rows)."""

    value: float
    table: F64


def solve_lp(game: AbstractGame) -> LPSolution:
    """The exact value of ``game`` to position 0 and an equilibrium (sequence-form LP,
    HiGHS). Rows no equilibrium sequence reaches are uniform.

    Raises:
        SequenceFormError: without perfect recall, or if the LP solver fails.
    """
    from scipy import sparse
    from scipy.optimize import linprog

    form = sequence_form(game)
    a = form.sparse()
    e, e_rhs = _constraints(form, 0, game)
    f, f_rhs = _constraints(form, 1, game)
    table = np.zeros(game.table_size)
    values = []
    for p in (0, 1):
        # p = 0: max f'v  s.t. F'v - A'x <= 0, Ex = e, x >= 0 (v free)
        # p = 1: max e'u  s.t. E'u + A y <= 0, Fy = f, y >= 0 (u free; value = -optimum)
        own, own_rhs, other, other_rhs = (e, e_rhs, f, f_rhs) if p == 0 else (f, f_rhs, e, e_rhs)
        coupling = -a.T if p == 0 else a
        n_own, n_dual = own.shape[1], other.shape[0]
        a_ub = sparse.hstack([coupling, other.T]).tocsr()
        a_eq = sparse.hstack([own, sparse.csr_matrix((own.shape[0], n_dual))]).tocsr()
        cost = np.concatenate([np.zeros(n_own), -other_rhs])
        bounds = [(0.0, None)] * n_own + [(None, None)] * n_dual
        result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq, b_eq=own_rhs,
                         bounds=bounds, method="highs")
        if result.status != 0:
            raise SequenceFormError(f"expected an optimal LP for position {p}, got status "
                                    f"{result.status}: {result.message!r}")
        values.append(-float(result.fun) if p == 0 else float(result.fun))
        x = np.maximum(result.x[:n_own], 0.0)
        seq_of = {index: s + 1 for s, index in enumerate(form.seq_index[p])}
        for start, par in form.parent[p].items():
            k = int(game.num_actions[_node_of(game, start)])
            weights = x[[seq_of[start + b] for b in range(k)]]
            total = weights.sum()
            table[start : start + k] = weights / total if total > 0 and x[par] > 0 else 1.0 / k
    for node in np.flatnonzero(game.offset >= 0):  # rows no deal reaches: uniform
        k = int(game.num_actions[node])
        start = int(game.offset[node])
        for b in range(int(game.rows[node])):
            if start + b * k not in form.parent[int(game.player[node])]:
                table[start + b * k : start + (b + 1) * k] = 1.0 / k
    return LPSolution(values[0], table)


def _lp(cost: F64, a_ub: Any, b_ub: F64, a_eq: Any, b_eq: F64, bounds: list[Any],
        what: str) -> Any:
    from scipy.optimize import linprog

    result = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds,
                     method="highs")
    if result.status != 0:
        raise SequenceFormError(f"expected an optimal LP for {what}, got status "
                                f"{result.status}: {result.message!r}")
    return result


def best_lifted_equilibrium(abstract: AbstractGame, full: AbstractGame,
                            index_map: npt.ArrayLike, slack: float = 1e-9) -> tuple[float, float]:
    """The smallest full-game best-response values an abstract *equilibrium* concedes.

    ``index_map[i]`` is the abstract table index whose probability the full table's index
    ``i`` plays (the lifting: a full row copies one abstract row). For each position ``p``
    the LP chooses, among ``p``'s abstract strategies that guarantee the abstract game's
    value (to ``slack``), the one whose lifted strategy concedes the least to a full-game
    best response. Returns ``(br0, br1)``: what a full-game best response wins in each
    position against the best such choice of the other position; their mean is the least
    full-game exploitability of any abstract equilibrium (the equilibrium set of a zero-sum
    game is a product, so the two choices combine).

    Raises:
        SequenceFormError: without perfect recall or if an LP fails.
    """
    from scipy import sparse

    mapping = np.asarray(index_map, dtype=np.int64).reshape(-1)
    if mapping.shape != (full.table_size,):
        raise UsageError(f"expected an index map of {full.table_size} entries, got "
                         f"{mapping.shape!r}")
    fa, ff = sequence_form(abstract), sequence_form(full)
    value = solve_lp(abstract).value
    conceded = [0.0, 0.0]
    for p in (0, 1):
        o = 1 - p
        # payoffs oriented for p (p maximises): rows p's sequences, columns o's
        m_abs = fa.sparse(p)
        m_full = ff.sparse(p)
        guarantee = value if p == 0 else -value
        own, own_rhs = _constraints(fa, p, abstract)
        opp_abs, opp_abs_rhs = _constraints(fa, o, abstract)
        opp_full, opp_full_rhs = _constraints(ff, o, full)
        seq_abs = {index: s + 1 for s, index in enumerate(fa.seq_index[p])}
        n_x, n_full = own.shape[1], len(ff.seq_index[p]) + 1
        lift_rows = [0] + [seq_abs[int(mapping[i])] for i in ff.seq_index[p]]
        lifting = sparse.csr_matrix((np.ones(n_full), (np.arange(n_full), lift_rows)),
                                    shape=(n_full, n_x))
        n_v, n_w = opp_abs.shape[0], opp_full.shape[0]
        zeros = sparse.csr_matrix
        a_ub = sparse.vstack([
            sparse.hstack([-(m_full.T @ lifting), zeros((m_full.shape[1], n_v)), opp_full.T]),
            sparse.hstack([-m_abs.T, opp_abs.T, zeros((m_abs.shape[1], n_w))]),
            sparse.hstack([zeros((1, n_x)), zeros(-opp_abs_rhs.reshape(1, -1)),
                           zeros((1, n_w))]),
        ]).tocsr()
        b_ub = np.concatenate([np.zeros(m_full.shape[1] + m_abs.shape[1]),
                               [-(guarantee - slack)]])
        a_eq = sparse.hstack([own, zeros((own.shape[0], n_v + n_w))]).tocsr()
        cost = np.concatenate([np.zeros(n_x + n_v), -opp_full_rhs])
        bounds = [(0.0, None)] * n_x + [(None, None)] * (n_v + n_w)
        result = _lp(cost, a_ub, b_ub, a_eq, own_rhs, bounds, f"position {p}'s best lift")
        conceded[o] = float(result.fun)  # = -(what p guarantees in the full game)
    return conceded[0], conceded[1]
