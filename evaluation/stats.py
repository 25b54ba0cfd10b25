"""Statistics for duplicate matches: means, standard errors and t confidence intervals.

The unit of a duplicate comparison is the *duplicate group*: one deal seed played in every
seat rotation. A variant's value for a group is the sum of its chips over every rotation,
divided by the hands it played in the group, in milli big blinds per hand (mbb/h,
:func:`to_mbb`). The groups are independent draws (a fresh seed each), so the estimate of a
variant's win rate is the mean of its group values, with the standard error
``s / sqrt(K)`` and a Student t interval on ``K - 1`` degrees of freedom (for few groups the
normal 1.96 would be too narrow). A difference is *significant* when the interval excludes
zero. :func:`combine` averages independent estimates (a variant's results against several
opponents) with Welch-Satterthwaite degrees of freedom.

The Student t distribution is computed here (regularized incomplete beta by continued
fraction, quantiles by bisection), so the module needs nothing beyond the stdlib.

Pure and stdlib only (no numpy): the dealer package must not pull in heavy modules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agent.acpc.errors import UsageError

CONFIDENCE = 0.95
"""Default coverage of the confidence intervals."""

_BETA_MAX_ITER = 300
_BETA_EPS = 3e-16
_QUANTILE_ITER = 200


def to_mbb(chips_per_hand: float, big_blind: float) -> float:
    """Chips per hand in milli big blinds per hand (``big_blind`` = the largest blind).

    Raises:
        ValueError: if ``big_blind`` is not positive.
    """
    if not big_blind > 0:
        raise UsageError(f"expected a positive big blind, got {big_blind!r}")
    return 1000.0 * chips_per_hand / big_blind


def _beta_cf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = tiny if abs(d) < tiny else d
    d = 1.0 / d
    h = d
    for m in range(1, _BETA_MAX_ITER + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _BETA_EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``a, b > 0``.

    Raises:
        ValueError: if ``x`` is outside ``[0, 1]`` or ``a``/``b`` is not positive.
    """
    if not (a > 0 and b > 0):
        raise UsageError(f"expected positive shape parameters, got a={a!r} b={b!r}")
    if not 0.0 <= x <= 1.0:
        raise UsageError(f"expected x in [0, 1], got {x!r}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
        + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``df = inf``: normal).

    Raises:
        ValueError: if ``df`` is not positive.
    """
    if not df > 0:
        raise UsageError(f"expected positive degrees of freedom, got {df!r}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    if math.isinf(df) or df > 1e7:
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    Raises:
        ValueError: if ``p`` is not in ``(0, 1)`` or ``df`` is not positive.
    """
    if not 0.0 < p < 1.0:
        raise UsageError(f"expected a probability in (0, 1), got {p!r}")
    if not df > 0:
        raise UsageError(f"expected positive degrees of freedom, got {df!r}")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    for _ in range(_QUANTILE_ITER):  # bracket: the quantile is finite for p < 1
        if t_cdf(hi, df) >= p:
            break
        lo, hi = hi, hi * 2.0
    for _ in range(_QUANTILE_ITER):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True, slots=True)
class Estimate:
    """A win rate with its uncertainty (all figures in the units of the inputs, e.g. mbb/h).

    ``units`` is the number of independent observations (duplicate groups); ``hands`` the
    hands behind them. With fewer than two units, or no spread in a single unit, ``se`` is
    ``nan`` and the interval unbounded.
    """

    mean: float
    se: float
    ci_low: float
    ci_high: float
    units: int
    hands: int
    df: float
    confidence: float = CONFIDENCE

    @property
    def half_width(self) -> float:
        """Half the width of the confidence interval."""
        return 0.5 * (self.ci_high - self.ci_low)

    @property
    def significant(self) -> bool:
        """True if the confidence interval excludes zero."""
        return self.ci_low > 0.0 or self.ci_high < 0.0

    @property
    def p_value(self) -> float:
        """Two-sided p-value of "the true mean is zero" (t test on the units)."""
        if self.units < 2 or math.isnan(self.se):
            return math.nan
        if self.se == 0.0:
            return 1.0 if self.mean == 0.0 else 0.0
        return 2.0 * (1.0 - t_cdf(abs(self.mean) / self.se, self.df))

    def negated(self) -> Estimate:
        """The opponent's view in a two-player zero-sum comparison."""
        return Estimate(-self.mean, self.se, -self.ci_high, -self.ci_low, self.units,
                        self.hands, self.df, self.confidence)

    def to_dict(self) -> dict[str, float | int | bool | None]:
        """A JSON-able dict (``nan`` becomes ``None``)."""

        def clean(x: float) -> float | None:
            return None if math.isnan(x) or math.isinf(x) else x

        return {
            "mean": clean(self.mean),
            "se": clean(self.se),
            "ci_low": clean(self.ci_low),
            "ci_high": clean(self.ci_high),
            "confidence": self.confidence,
            "units": self.units,
            "hands": self.hands,
            "df": clean(self.df),
            "p_value": clean(self.p_value),
            "significant": self.significant,
        }


def estimate(
    units: Sequence[float], hands: int, confidence: float = CONFIDENCE
) -> Estimate:
    """Mean of independent unit values with its standard error and t interval.

    Args:
        units: one value per independent unit (e.g. mbb/h of each duplicate group).
        hands: the number of hands behind the units (reported, not used in the formula).
        confidence: coverage of the interval.

    Raises:
        ValueError: if there are no units or ``confidence`` is not in ``(0, 1)``.
    """
    if not units:
        raise UsageError("expected at least one unit to estimate from, got none")
    if not 0.0 < confidence < 1.0:
        raise UsageError(f"expected a confidence in (0, 1), got {confidence!r}")
    k = len(units)
    mean = math.fsum(units) / k
    if k < 2:
        return Estimate(mean, math.nan, -math.inf, math.inf, k, hands, math.nan, confidence)
    var = math.fsum((u - mean) ** 2 for u in units) / (k - 1)
    se = math.sqrt(var / k)
    df = float(k - 1)
    half = t_quantile(0.5 + confidence / 2.0, df) * se
    return Estimate(mean, se, mean - half, mean + half, k, hands, df, confidence)


def combine(parts: Sequence[Estimate], confidence: float = CONFIDENCE) -> Estimate:
    """The average of independent estimates (equal weights), e.g. over several opponents.

    The standard error is ``sqrt(sum se_i^2) / m``; the degrees of freedom follow
    Welch-Satterthwaite. An estimate without a standard error makes the result's unbounded.

    Raises:
        ValueError: if ``parts`` is empty.
    """
    if not parts:
        raise UsageError("expected at least one estimate to combine, got none")
    m = len(parts)
    mean = math.fsum(p.mean for p in parts) / m
    units = sum(p.units for p in parts)
    hands = sum(p.hands for p in parts)
    if any(math.isnan(p.se) for p in parts):
        return Estimate(mean, math.nan, -math.inf, math.inf, units, hands, math.nan, confidence)
    var = math.fsum(p.se**2 for p in parts) / (m * m)
    se = math.sqrt(var)
    if var == 0.0:
        return Estimate(mean, 0.0, mean, mean, units, hands, float(units - m), confidence)
    denom = math.fsum((p.se**2 / (m * m)) ** 2 / p.df for p in parts if p.se > 0)
    df = (var * var) / denom if denom > 0 else float(units - m)
    half = t_quantile(0.5 + confidence / 2.0, df) * se
    return Estimate(mean, se, mean - half, mean + half, units, hands, df, confidence)
