"""evaluation.stats: Student t, estimates over duplicate units, combination; all-in EV."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.acpc.betting import parse_betting
from agent.acpc.cards import parse_cards
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from evaluation import logtool
from evaluation.estimators.allin import AllinEvaluator, allin_round, parse_state_line, summarize_log
from evaluation.stats import betainc, combine, estimate, t_cdf, t_quantile, to_mbb

# Two-sided 95% critical values of Student's t (standard tables).
T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 9: 2.2622, 10: 2.2281,
        20: 2.0860, 30: 2.0423, 100: 1.9840}


@pytest.mark.parametrize(("df", "want"), sorted(T975.items()))
def test_t_quantile_matches_tables(df: int, want: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(want, abs=1e-4)
    assert t_quantile(0.025, df) == pytest.approx(-want, abs=1e-4)


def test_t_distribution_limits_and_symmetry() -> None:
    assert t_quantile(0.975, 1e9) == pytest.approx(1.959964, abs=1e-5)
    assert t_cdf(0.0, 7) == pytest.approx(0.5)
    assert t_cdf(1.3, 4) + t_cdf(-1.3, 4) == pytest.approx(1.0)
    assert t_cdf(1.0, 1) == pytest.approx(0.75)  # Cauchy: 1/2 + atan(1)/pi
    assert betainc(2.0, 2.0, 0.5) == pytest.approx(0.5)
    assert betainc(1.0, 1.0, 0.3) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="probability"):
        t_quantile(1.0, 3)


@given(st.floats(0.001, 0.999), st.sampled_from([1, 2, 3, 7, 25, 200]))
@settings(max_examples=60, deadline=None)
def test_quantile_inverts_cdf(p: float, df: int) -> None:
    assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-9)


def test_estimate_by_hand() -> None:
    units = [10.0, -4.0, 7.0, 3.0, -1.0]
    e = estimate(units, hands=5000)
    sd = statistics.stdev(units)
    assert e.mean == pytest.approx(3.0)
    assert e.se == pytest.approx(sd / math.sqrt(5))
    assert e.half_width == pytest.approx(2.7764 * sd / math.sqrt(5), rel=1e-4)
    assert e.units == 5 and e.hands == 5000 and e.df == 4
    assert not e.significant and 0.2 < e.p_value < 0.5
    neg = e.negated()
    assert neg.mean == -3.0 and neg.ci_low == pytest.approx(-e.ci_high)


def test_estimate_edge_cases() -> None:
    exact = estimate([-750.0] * 4, hands=400)
    assert (exact.mean, exact.se, exact.ci_low, exact.ci_high) == (-750.0, 0.0, -750.0, -750.0)
    assert exact.significant and exact.p_value == 0.0
    zero = estimate([0.0, 0.0], hands=2)
    assert zero.ci_low == zero.ci_high == 0.0 and not zero.significant
    one = estimate([5.0], hands=10)
    assert math.isnan(one.se) and math.isinf(one.half_width) and not one.significant
    assert one.to_dict()["se"] is None
    with pytest.raises(ValueError, match="at least one unit"):
        estimate([], hands=0)


def test_combine_averages_independent_estimates() -> None:
    a = estimate([1.0, 3.0, 2.0, 6.0], 400)
    b = estimate([-2.0, 0.0, 1.0, -3.0], 400)
    c = combine([a, b])
    assert c.mean == pytest.approx((a.mean + b.mean) / 2)
    assert c.se == pytest.approx(math.sqrt(a.se**2 + b.se**2) / 2)
    assert 3 <= c.df <= 6 and c.units == 8 and c.hands == 800
    assert combine([a]).half_width == pytest.approx(a.half_width)


def test_to_mbb() -> None:
    assert to_mbb(-75.0, 100) == -750.0
    assert to_mbb(1.0, 1) == 1000.0
    with pytest.raises(ValueError, match="big blind"):
        to_mbb(1.0, 0)


@given(st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=2, max_size=30))
@settings(max_examples=60, deadline=None)
def test_interval_contains_the_mean(units: list[float]) -> None:
    e = estimate(units, len(units))
    assert e.ci_low <= e.mean + 1e-9 * max(1.0, abs(e.mean))
    assert e.mean <= e.ci_high + 1e-9 * max(1.0, abs(e.mean))


# ---------------------------------------------------------------------- all-in EV


def test_leduc_allin_expectation_by_hand(tmp_path: Path) -> None:
    # Leduc: Ks against Qs, all in preflop (12 each). Left: Jh Js Qh Kh; Qh pairs the
    # queen (1 board of 4), anything else leaves the king ahead: EV = 12 * (3/4 - 1/4) = 6.
    game = load_game("leduc.nolimit.2p.game")
    state = parse_betting(game, "r12c/")
    assert state.finished and allin_round(state) == 0
    line = "STATE:0:r12c/:Ks|Qs/Qh:-12|12:a|b"
    hand = parse_state_line(line, game)
    assert hand.hole == (parse_cards("Ks"), parse_cards("Qs"))
    assert AllinEvaluator(game).adjusted_values(hand) == (6.0, -6.0)
    folded = parse_state_line("STATE:1:r12f:Qh|Kh/:1|-1:b|a", game)
    assert allin_round(folded.state) is None
    assert AllinEvaluator(game).adjusted_values(folded) == (1.0, -1.0)
    log = tmp_path / "m.log"
    log.write_text(
        "# name/game/hands/seed m leduc.nolimit.2p.game 2 1\n#--t_response 600000\n"
        "#--t_hand 600000\n#--t_per_hand 7000\n" + line + "\n"
        "STATE:1:r12f:Qh|Kh:1|-1:b|a\nSCORE:-13|13:a|b\n",
        encoding="ascii",
    )
    summary = summarize_log(game, log.read_text().splitlines())
    assert summary.names == ("a", "b") and summary.raw == (-13.0, 13.0)
    assert summary.adjusted == (5.0, -5.0) and summary.allin_hands == 1


def test_numba_and_python_enumerations_agree() -> None:
    game = load_game("holdem.nolimit.3p.game")
    state = parse_betting(game, "ccc/r20000cc//")
    assert allin_round(state) == 1
    hole = (parse_cards("AsAh"), parse_cards("KdKc"), parse_cards("7c2d"))
    board = parse_cards("Ks9h2h")
    py = AllinEvaluator(game, "python").expected_values(state, hole, board)
    nb = AllinEvaluator(game, "numba").expected_values(state, hole, board)
    assert py == pytest.approx(nb, abs=1e-9)
    assert sum(py) == pytest.approx(0.0, abs=1e-6)


def test_preflop_holdem_allin_is_fast_and_sane() -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds.game")
    state = parse_betting(game, "r20000c///")
    ev = AllinEvaluator(game).expected_values(
        state, (parse_cards("AsAh"), parse_cards("KdKc")), ()
    )
    # Aces against kings (no shared suit): about 82% all in for 20000 each.
    assert 0.80 < (ev[0] + 20000) / 40000 < 0.84
    assert ev[0] == pytest.approx(-ev[1])


def test_acpc_log_allin_ev(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "m.log"
    log.write_text(
        "# name/game/hands/seed m leduc.nolimit.2p.game 1 1\n#--t_response 600000\n"
        "#--t_hand 600000\n#--t_per_hand 7000\nSTATE:0:r12c/:Ks|Qs/Qh:-12|12:a|b\n"
        "SCORE:-12|12:a|b\n",
        encoding="ascii",
    )
    assert logtool.main(["allin-ev", "leduc.nolimit.2p.game", str(log)]) == 0
    out = capsys.readouterr().out
    assert "1 all-in hand(s) adjusted" in out
    assert " -12 " in out and " 6 " in out and "+6000.0" in out
    assert logtool.main(["allin-ev", "leduc.nolimit.2p.game", str(tmp_path / "no")]) == 1
    assert "acpc-log: error: could not read log" in capsys.readouterr().err


def test_long_cards_in_a_state_line_are_quoted_as_an_excerpt() -> None:
    # the card parser quoted the whole field: 5,253 characters for a 5,000-digit card
    # field (fuzz log:1:9); a 5,000-digit raise was a ValueError (fuzz log:1:142)
    game = load_game("leduc.nolimit.2p.game")
    for line in ("STATE:0:r12c/:K" + "9" * 5000 + "|Qs/Qh:-12|12:a|b",
                 "STATE:0:r" + "9" * 5000 + "c/:Ks|Qs/Qh:-12|12:a|b"):
        with pytest.raises(UsageError) as info:
            parse_state_line(line, game, "m.log:3")
        message = str(info.value)
        assert message.startswith("m.log:3: bad ") and len(message) < 400, message
        assert "(5,0" in message
