"""Whole tables purified by the agent's one rule: :func:`agent.strategy.kernels.purify_rows`
(the evaluators' purification) row for row equals :meth:`Purification.apply` (the policy's),
bit for bit, whatever the row's length."""

from __future__ import annotations

import numpy as np
import pytest

from agent.strategy.kernels import purify_rows
from agent.strategy.purification import Purification, sample_index

KINDS = [Purification("none"), Purification("full"), Purification("threshold", 0.3)]


@pytest.mark.parametrize("purification", KINDS, ids=str)
def test_purify_rows_is_the_policys_rule(purification: Purification) -> None:
    rng = np.random.default_rng(7)
    for k in (1, 2, 3, 5, 8, 11):
        rows = rng.random((40, k)) ** 3
        rows[rng.random((40, k)) < 0.3] = 0.0
        rows[:, 0] += 1e-3  # every row has mass
        rows[1] = 1.0 / k  # an all-tie row
        got = purify_rows(rows, purification, renormalise=False)
        for row, out in zip(rows, got, strict=True):
            assert out.tolist() == purification.apply(row.tolist())
        # renormalised: what sample_index samples from, summed left to right like the policy
        norm = purify_rows(rows, purification)
        for row, out in zip(rows, norm, strict=True):
            applied = purification.apply(row.tolist())
            if purification.kind == "none":
                total = 0.0
                for p in applied:
                    total += p
                applied = [p / total for p in applied]
            assert out.tolist() == applied
            for u in (0.0, 0.37, 0.999):
                assert sample_index(out.tolist(), u) == sample_index(applied, u)


def test_a_row_without_mass_is_nan_when_renormalised_and_kept_otherwise() -> None:
    rows = np.zeros((2, 4))
    rows[1] = [0.1, 0.6, 0.3, 0.0]
    full = Purification("full")
    assert np.isnan(purify_rows(rows, full)[0]).all()
    assert purify_rows(rows, full, renormalise=False)[0].tolist() == [0.0] * 4
    assert purify_rows(rows, full)[1].tolist() == [0.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="2-D"):
        purify_rows(np.zeros(3), full)
