"""The seven mappings against docs/background.md: worked values and the desiderata as properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agent.abstraction.translation import (
    BUILTIN_MAPPINGS,
    DETERMINISTIC,
    bracket,
    get_mapping,
    rand_pshar,
    translate,
)
from agent.strategy.purification import parse_purification

GEOMETRIC = {"det-geo", "rand-geo-1", "rand-geo-2"}
RANDOMISED = sorted(set(BUILTIN_MAPPINGS) - DETERMINISTIC)

# f(A, B, x) worked by hand from the formulas, at A = 1, B = 4.
WORKED_1_4 = {
    "det-arith": {2.0: 1.0, 2.5: 1.0, 2.6: 0.0},
    "rand-arith": {2.0: 2 / 3, 3.0: 1 / 3},
    "det-geo": {1.9: 1.0, 2.0: 0.0, 3.0: 0.0},
    "rand-geo-1": {2.0: 0.5, 3.0: 1 * 1 / (1 * 1 + 3 * 2)},
    "rand-geo-2": {2.0: 0.5, 3.0: 1 * 7 * 1 / (3 * (9 + 4))},
    "det-pshar": {13 / 7: 1.0, 1.85: 1.0, 1.9: 0.0},
    "rand-pshar": {2.0: 4 / 9, 3.0: 2 / 12},
}
# ... and at A = 0.01, B = 1.
WORKED_001_1 = {
    "det-arith": {0.505: 1.0, 0.51: 0.0},
    "rand-arith": {0.5: 0.5 / 0.99},
    "det-geo": {0.09: 1.0, 0.1: 0.0, 0.2: 0.0},
    "rand-geo-1": {0.1: 0.01 * 0.9 / (0.01 * 0.9 + 0.1 * 0.09)},
    "rand-geo-2": {0.1: 0.01 * 1.1 * 0.9 / (0.99 * (0.01 + 0.01))},
    "det-pshar": {(1.01 + 0.02) / 3.01: 1.0, 0.35: 0.0},
    "rand-pshar": {0.5: 0.5 * 1.01 / (0.99 * 1.5)},
}


@pytest.mark.parametrize("name", sorted(BUILTIN_MAPPINGS))
def test_worked_values(name: str) -> None:
    f = get_mapping(name)
    for x, want in WORKED_1_4[name].items():
        assert f(1.0, 4.0, x) == pytest.approx(want, abs=1e-12), (name, x)
    for x, want in WORKED_001_1[name].items():
        assert f(0.01, 1.0, x) == pytest.approx(want, abs=1e-12), (name, x)


def test_tie_rules_with_inexact_floats() -> None:
    # 0.1 * 25 == 2.5000000000000004: still the Det-Arith midpoint of (1, 4), mapped to A.
    assert get_mapping("det-arith")(1.0, 4.0, 0.1 * 25) == 1.0
    # sqrt(1 * 4) = 2: Det-Geo maps the threshold itself to B.
    assert get_mapping("det-geo")(1.0, 4.0, 0.1 * 20) == 0.0
    assert get_mapping("det-pshar")(1.0, 4.0, 13 / 7 * (1 + 1e-12)) == 1.0


sizes = st.floats(0.01, 50.0, allow_nan=False)


@st.composite
def brackets(draw: st.DrawFn, allow_zero: bool = True) -> tuple[float, float, float]:
    a = 0.0 if allow_zero and draw(st.booleans()) else draw(sizes)
    b = draw(sizes)
    assume(b > a * (1 + 1e-6) + 1e-6)
    x = draw(st.floats(a, b))
    return a, b, x


@pytest.mark.parametrize("name", sorted(BUILTIN_MAPPINGS))
@given(abx=brackets())
def test_probability_and_boundaries(name: str, abx: tuple[float, float, float]) -> None:
    f = BUILTIN_MAPPINGS[name]
    a, b, x = abx
    value = f(a, b, x)
    assert 0.0 <= value <= 1.0
    assert f(a, b, b) == 0.0
    if a > 0 or name not in GEOMETRIC:
        assert f(a, b, a) == 1.0
    elif x > 0:
        assert value == 0.0  # geometric at A = 0: everything in (0, B] goes to B


@pytest.mark.parametrize("name", sorted(BUILTIN_MAPPINGS))
@given(abx=brackets(), dx=st.floats(0.0, 1.0))
def test_monotone_in_x(name: str, abx: tuple[float, float, float], dx: float) -> None:
    f = BUILTIN_MAPPINGS[name]
    a, b, x = abx
    y = min(b, x + dx * (b - x))
    assert f(a, b, y) <= f(a, b, x) + 1e-9


SCALE_FREE = sorted(set(BUILTIN_MAPPINGS) - {"det-pshar", "rand-pshar"})


@pytest.mark.parametrize("name", SCALE_FREE)
@given(abx=brackets(allow_zero=False), k=st.floats(0.05, 20.0))
def test_scale_invariance(name: str, abx: tuple[float, float, float], k: float) -> None:
    """``f(kA, kB, kx) = f(A, B, x)`` for the arithmetic and geometric mappings.

    The pseudo-harmonic mappings are scale invariant only as functions of chips *and pot*
    (their ``1 +`` terms are the pot), which holds by construction since every mapping here
    takes pot fractions; their defining identity is tested below instead.
    """
    f = BUILTIN_MAPPINGS[name]
    a, b, x = abx
    if name in DETERMINISTIC:
        threshold = (a + b) / 2 if name == "det-arith" else math.sqrt(a * b)
        assume(abs(x - threshold) > 1e-6 * max(1.0, threshold))
    assert f(k * a, k * b, k * x) == pytest.approx(f(a, b, x), abs=1e-9)


@pytest.mark.parametrize("name", RANDOMISED)
@given(abx=brackets(allow_zero=False), eps=st.floats(1e-9, 1e-6))
def test_randomised_mappings_are_continuous(
    name: str, abx: tuple[float, float, float], eps: float
) -> None:
    f = BUILTIN_MAPPINGS[name]
    a, b, x = abx
    y = min(b, x + eps * (b - a))
    # Lipschitz in x with a constant bounded by the bracket (all these have finite slopes
    # on [A, B] for A > 0): a tiny step moves the value by a tiny amount.
    assert abs(f(a, b, y) - f(a, b, x)) <= 1e-3


def test_rand_pshar_keeps_calling_frequency() -> None:
    for a, b in ((0.0, 1.0), (1.0, 4.0), (0.5, 2.0)):
        for i in range(1, 20):
            x = a + (b - a) * i / 20
            v = rand_pshar(a, b, x)
            assert v / (1 + a) + (1 - v) / (1 + b) == pytest.approx(1 / (1 + x))


def test_bracket_and_translate() -> None:
    pot_sizes = [0.0, 0.5, 1.0, 10.0]
    assert bracket(pot_sizes, 0.75) == (1, 2)
    assert bracket(pot_sizes, 0.5) == (1, 1)
    assert bracket(pot_sizes, 0.1 * 5) == (1, 1)
    assert bracket(pot_sizes, 50.0) == (3, 3)
    assert bracket(pot_sizes, -1.0) == (0, 0)
    t = translate(pot_sizes, 0.75, get_mapping("rand-arith"), 0.2)
    assert (t.low, t.high, t.prob_low, t.chosen) == (1, 2, 0.5, 1)
    assert translate(pot_sizes, 0.75, get_mapping("rand-arith"), 0.7).chosen == 2
    with pytest.raises(ValueError, match="at least one abstract size"):
        bracket([], 1.0)


def test_custom_mappings_by_module_function() -> None:
    f = get_mapping("agent.abstraction.translation:rand_arith")
    assert f(1.0, 3.0, 2.0) == 0.5
    with pytest.raises(ValueError, match="expected a mapping name"):
        get_mapping("no-such-mapping")
    with pytest.raises(ValueError, match="importable module"):
        get_mapping("no_such_module_xyz:f")
    over_one = get_mapping("operator:add")  # callable, but 1 + 4 + ... is no probability
    with pytest.raises(TypeError):
        over_one(1.0, 4.0, 2.0)  # operator.add takes two arguments
    with pytest.raises(ValueError, match="to return a probability in"):
        get_mapping("builtins:max")(1.0, 4.0, 2.0)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8),
       st.sampled_from(["none", "full", "threshold:0.15", "threshold:0.5"]))
def test_purification_never_leaves_the_node(probs: list[float], mode: str) -> None:
    assume(sum(probs) > 1e-6)
    total = sum(probs)
    dist = [p / total for p in probs]
    out = parse_purification(mode).apply(dist)
    assert len(out) == len(dist)
    assert sum(out) == pytest.approx(1.0)
    for p, q in zip(dist, out, strict=True):
        assert q >= 0.0
        if p == 0.0:
            assert q == 0.0


def test_purification_modes() -> None:
    assert parse_purification("full").apply([0.2, 0.5, 0.3]) == [0.0, 1.0, 0.0]
    assert parse_purification("full").apply([0.4, 0.4, 0.2]) == [0.5, 0.5, 0.0]
    assert parse_purification("threshold:0.15").apply([0.1, 0.6, 0.3]) == pytest.approx(
        [0.0, 2 / 3, 1 / 3])
    assert parse_purification("threshold:0.5").apply([0.3, 0.3, 0.4]) == [0.0, 0.0, 1.0]
    assert parse_purification("none").apply([0.1, 0.9]) == [0.1, 0.9]
    for bad in ("half", "threshold:0", "threshold:x", "threshold:2"):
        with pytest.raises(ValueError, match="expected a purification"):
            parse_purification(bad)
