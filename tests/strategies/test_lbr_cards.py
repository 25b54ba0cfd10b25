"""Sampled LBR's card kernels (:mod:`strategies.measure.lbr_cards`) on tiny inputs against the
agent's own estimator and the reference evaluator, once more without the JIT (the kernels'
plain-Python semantics). The batched versions are checked at full size in
``test_holdem_lbr.py``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agent.abstraction.holdem_board import late_ehs2
from agent.abstraction.holdem_buckets import SCRATCH_SIZE, STRENGTH_TABLES, ehs2
from agent.acpc.evaluator import rank_hand
from agent.acpc.gamefiles import load_game
from strategies.measure.lbr_cards import (
    _ehs2_kernel,
    _smallest_kernel,
    all_holes,
    equities,
)
from tests.support import NO_JIT, run_without_jit

HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"


def test_small_kernels_equal_oracles() -> None:
    """Runs again without the JIT (below): the kernels' plain-Python semantics."""
    game = load_game(HOLDEM)
    rng = random.Random(2)
    dealt = rng.sample(range(52), 7)
    hole, board = dealt[:2], dealt[2:6]
    others = np.array([dealt[6:] + [c] for c in range(52) if c not in dealt][:3],
                      dtype=np.int64)
    others.sort(axis=1)
    metric = np.zeros(len(others))
    _ehs2_kernel(others, np.array(board, dtype=np.int64), 4, *STRENGTH_TABLES,
                 np.zeros(SCRATCH_SIZE, np.int64), metric)
    assert metric.tolist() == [ehs2(h, board) for h in others.tolist()]
    # every hole's E[HS^2] at once on the river (a sort with card removal), as the agent's
    full = board + [next(c for c in range(52) if c not in dealt + others.ravel().tolist())]
    every = all_holes(game)
    batch = np.zeros(every.shape[0])
    late_ehs2(np.array(full, dtype=np.int64), every, *STRENGTH_TABLES[1:], batch)
    for h in others.tolist():
        if not set(h) & set(full):
            i = int(np.flatnonzero((every == h).all(axis=1))[0])
            assert batch[i] == ehs2(h, full)
    assert np.isnan(batch[(every == full[0]).any(axis=1)]).all()
    river = np.array([[c] for c in range(52) if c not in dealt + others.ravel().tolist()][:2])
    value = equities(game, hole, board, others, river)
    for other, v in zip(others.tolist(), value.tolist(), strict=True):
        score = sum(2 if rank_hand([*hole, *board, r]) > rank_hand([*other, *board, r]) else
                    1 if rank_hand([*hole, *board, r]) == rank_hand([*other, *board, r])
                    else 0 for (r,) in river.tolist())
        assert v == score / (2 * len(river))
    # by rank class: the same equities, here with a flush possible on a four-suited board
    np.testing.assert_array_equal(equities(game, hole, board, others, river, fast=True), value)
    spades = [c for c in range(52) if c % 4 == 3 and c not in hole][:4]
    suited = np.array([[c, d] for c in range(52) for d in range(c + 1, 52)
                       if not {c, d} & {*hole, *spades}][::151], dtype=np.int64)
    rivers = np.array([[c] for c in range(52) if c not in {*hole, *spades}][::9])
    np.testing.assert_array_equal(equities(game, hole, spades, suited, rivers, fast=True),
                                  equities(game, hole, spades, suited, rivers))
    # the m smallest keys of each row, by card, as argpartition then sort
    keys = np.random.default_rng(3).random((4, 9))
    pool = np.arange(9, dtype=np.int64) * 5 + 1
    got = np.zeros((4, 3), np.int64)
    _smallest_kernel(keys, pool, got)
    assert got.tolist() == np.sort(pool[np.argpartition(keys, 2, axis=1)[:, :3]],
                                   axis=1).tolist()


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    run_without_jit(__file__)
