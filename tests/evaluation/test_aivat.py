"""AIVAT (issue 31, items 1 and 2): unbiased by exact enumeration on Kuhn, inside its
interval around ``--exact`` over several seeds in Kuhn and Leduc, and ``acpc-log aivat`` on
the logs our dealer wrote equals ``acpc-match --estimator aivat`` on the same deals."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from agent.acpc.betting import BettingState, parse_betting
from agent.acpc.cards import deck_for
from agent.acpc.dealing import Deal, deal_hands
from agent.acpc.gamefiles import load_game
from agent.builtin import RandomPolicy
from agent.data import strategy_path
from evaluation.estimators.aivat import (
    CheckdownValue,
    ExactValue,
    PlayerResult,
    SampledValue,
    ValueFunction,
    action_distribution,
    exact_applies,
    fitted,
    hand_aivat,
    observe_belief,
    term_names,
)
from evaluation.estimators.estimator import make_model, play_hand
from evaluation.estimators.exact import ExactArena, Player
from evaluation.match.variants import parse_variant
from evaluation.stats import estimate
from tests.support import ROOT

KUHN = str(ROOT / "tests" / "data" / "kuhn.limit.2p.game")
KUHN_FILE = str(ROOT / "tests" / "data" / "kuhn.limit.2p.strat")
"""A 60-iteration CFR+ solve of limit Kuhn (``acpc-strategy solve --game KUHN
--iterations 60``): mixed rows, so its own actions have brackets."""
LEDUC = "leduc.nolimit.2p.game"
LEDUC_FILE = str(strategy_path("leduc.nolimit.2p.fcpa.strat"))


def _models(game: Any, specs: list[str]) -> list[Any]:
    return [make_model(parse_variant(f"v{i}={s}"), game, expand_random=True)
            for i, s in enumerate(specs)]


def _exact(game: Any, specs: list[str]) -> tuple[float, float]:
    """Position 0's exact value with ``specs[p]`` in position ``p``, and its mean over
    both seatings for the first spec (chips)."""
    arena = ExactArena(game)
    players = [Player(f"v{i}", s,
                      mapping="rand-pshar" if not s.startswith("builtin:") and game.is_nolimit
                      else None) for i, s in enumerate(specs)]
    return arena.position_values(players)[0], arena.value(players[0], players[1])[0]


def _trajectories(game: Any, models: list[Any], deal: Deal,
                  ) -> list[tuple[float, list[Any], BettingState]]:
    """Every betting of ``deal`` with its probability under both models (exact)."""
    out: list[tuple[float, list[Any], BettingState]] = []

    def walk(state: BettingState, beliefs: list[Any], prob: float, actions: list[Any]) -> None:
        if state.finished:
            out.append((prob, actions, state))
            return
        p = state.player
        for a, (q, post) in action_distribution(models[p], beliefs[p], state, p, deal).items():
            after = list(beliefs)
            after[p] = post
            after[1 - p] = observe_belief(models[1 - p], beliefs[1 - p], state, a)
            walk(state.apply(a), after, prob * q, [*actions, a])

    walk(BettingState.initial(game), [((1.0, m.start(p, deal)),)
                                      for p, m in enumerate(models)], 1.0, [])
    return out


def test_kuhn_expectation_over_every_deal_and_draw_is_the_exact_value() -> None:
    game = load_game(KUHN)
    specs = [KUHN_FILE, "builtin:random"]
    models = _models(game, specs)
    exact, _ = _exact(game, specs)
    deck = deck_for(game)
    deals = [Deal((a, b), ()) for a, b in itertools.permutations(((c,) for c in deck), 2)]
    paths = [(d, t) for d in deals for t in _trajectories(game, models, d)]
    assert sum(p for _, (p, _, _) in paths) == pytest.approx(len(deals))
    checkdown: ValueFunction = CheckdownValue(game)
    cases: list[tuple[list[int], ValueFunction]] = [
        ([0, 1], ExactValue(game, models)), ([0, 1], checkdown), ([0], checkdown),
        ([1], checkdown)]
    spread = {}
    for known, value in cases:
        seats = [m if p in known else None for p, m in enumerate(models)]
        for imaginary in (False, True):
            mean = raw = sq = sq_raw = 0.0
            for deal, (prob, actions, _) in paths:
                got = hand_aivat(game, seats, deal.hole, (), actions, value,
                                 imaginary=imaginary)
                w = prob / len(deals)
                mean += w * got.aivat
                sq += w * got.aivat ** 2
                raw += w * got.raw
                sq_raw += w * got.raw ** 2
            assert raw == pytest.approx(exact, abs=1e-9)
            assert mean == pytest.approx(exact, abs=1e-9), (known, value.name, imaginary)
            spread[(tuple(known), value.name, imaginary)] = (
                math.sqrt(max(sq - mean ** 2, 0.0)), math.sqrt(sq_raw - raw ** 2))
    # exact values: every bracket cancels what it measures, one value per hand
    sd, sd_raw = spread[((0, 1), "exact", False)]
    assert sd < 1e-6 < sd_raw  # float32 rows
    # the check-down values with imaginary observations over both seats: less spread
    assert spread[((0, 1), "checkdown", True)][0] < 0.5 * sd_raw


def _played(game: Any, specs: list[str], seeds: list[int], hands: int,
            known: list[bool], walk_samples: int = 0, imaginary: bool = True,
            ) -> PlayerResult:
    """Per duplicate deal of ``seeds``: the first spec's chips (mean of both seatings),
    raw and by AIVAT, the hands played by the models with seeded draws (random by its
    own policy)."""
    models = _models(game, specs)
    values: dict[tuple[int, int], ValueFunction] = {}
    for seating in ((0, 1), (1, 0)):
        seated = [models[i] for i in seating]
        values[seating] = (ExactValue(game, seated) if all(known)
                           and exact_applies(game, seated) else CheckdownValue(game))
        if walk_samples:
            values[seating] = SampledValue(game, seated, walk_samples)
    raw: list[float] = []
    aiv: list[float] = []
    terms: list[list[float]] = []
    for seed in seeds:
        rng = random.Random(seed)
        deals = deal_hands(game, seed)
        for h in range(hands):
            deal = next(deals)
            r_sum = a_sum = 0.0
            t_sum: list[float] = []
            for seating in ((0, 1), (1, 0)):
                seated = [models[i] for i in seating]
                policies = [RandomPolicy(rng.randrange(1 << 30))
                            if specs[i] == "builtin:random" else None for i in seating]
                draws = [rng.random, rng.random]
                betting, _ = play_hand(seated, deal, draws, policies, game, h)
                state = parse_betting(game, betting)
                actions = [a for rnd in state.actions for a in rnd]
                board = deal.board[: game.board_cards_through(state.round)]
                known_seated = [m if known[i] else None for m, i in zip(seated, seating,
                                                                         strict=True)]
                got = hand_aivat(game, known_seated, deal.hole, board, actions, values[seating],
                                 key=(seed, h), imaginary=imaginary)
                sign = 1.0 if seating[0] == 0 else -1.0
                r_sum += sign * got.raw
                a_sum += sign * got.aivat
                t = [sign * x / 2 for x in got.terms]
                t_sum = t if not t_sum else [a + b for a, b in zip(t_sum, t, strict=True)]
            raw.append(r_sum / 2)
            aiv.append(a_sum / 2)
            terms.append(t_sum)
    return PlayerResult("v0", raw, aiv, 2 * len(raw), terms)


@pytest.mark.parametrize(("game_name", "specs", "hands"), [
    (KUHN, [KUHN_FILE, "builtin:random"], 150),
    (LEDUC, [f"{LEDUC_FILE},mapping=rand-pshar", "builtin:random"], 40),
])
def test_mean_over_seeds_is_inside_its_interval_around_exact(game_name: str,
                                                             specs: list[str],
                                                             hands: int) -> None:
    game = load_game(game_name)
    _, exact = _exact(game, [s.split(",")[0] for s in specs])
    both = _played(game, specs, [11, 12, 13], hands, [True, True])
    est = estimate(both.aivat, both.hands)
    assert est.ci_low <= exact <= est.ci_high, (est, exact)
    assert est.se < 0.75 * estimate(both.raw, both.hands).se
    main = len(term_names(game)) + 1  # the corrections, then the extra features
    assert [sum(t[:main]) for t in both.terms or []] == pytest.approx(
        [r - a for r, a in zip(both.raw, both.aivat, strict=True)], abs=1e-9)
    fit = estimate(fitted(both), both.hands)
    assert fit.ci_low <= exact <= fit.ci_high, (fit, exact)
    # one seat known (the file), the other valued as unknown: still inside
    one = _played(game, specs, [14, 15], hands, [True, False])
    for values in (one.aivat, fitted(one)):
        got = estimate(values, one.hands)
        assert got.ci_low <= exact <= got.ci_high, (got, exact)


def test_log_of_our_dealer_equals_the_match_estimate(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     ) -> None:
    from evaluation.cli import main as match_main
    from evaluation.logtool import main as log_main

    assert match_main(["--game", KUHN, "-v", f"s={KUHN_FILE}", "-v", "r=builtin:random",
                       "--hands", "60", "--matches", "2", "--seed", "7", "--estimator",
                       "aivat", "--workers", "1", "--quiet", "--transport", "tcp", "--run-dir",
                       str(tmp_path / "tcp"), "--json", str(tmp_path / "tcp.json")]) == 0
    match = json.loads((tmp_path / "tcp.json").read_text())["aivat"]["rows"]
    logs = sorted(str(p) for p in (tmp_path / "tcp").rglob("*.log"))
    assert len(logs) == 4  # two units, both seatings
    assert log_main(["aivat", KUHN, *logs, "--seat", f"s={KUHN_FILE}", "--seat",
                     "r=builtin:random", "--json", str(tmp_path / "log.json")]) == 0
    rows = {r["comparison"]: r for r in json.loads((tmp_path / "log.json").read_text())["rows"]}
    (row,) = match
    assert row["comparison"] == "s vs r" and row["deals"] == 120
    assert rows["s vs r"]["aivat"] == row["aivat"] and rows["s vs r"]["raw"] == row["raw"]
    assert rows["r vs s"]["aivat"]["mean"] == pytest.approx(-row["aivat"]["mean"])
    assert row["sd_aivat_per_deal"] < 1e-3 < row["sd_raw_per_deal"]  # exact values (mbb)
    capsys.readouterr()
    # seats by number, in each log: seat 1 of r-vs-s.k0.log is r
    assert Path(logs[0]).name == "r-vs-s.k0.log"
    assert log_main(["aivat", KUHN, logs[0], "--seat", "1=builtin:random"]) == 0
    assert "known: r\n" in capsys.readouterr().out
    # a strategy the log contradicts: one line, exit 1
    assert log_main(["aivat", KUHN, *logs, "--seat", "s=builtin:call"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "probability 0" in err, err


def test_sampled_walk_values_stay_inside_the_interval_around_exact() -> None:
    """The hold'em value (boards sampled by a hash, the agents' walk on each), forced on
    limit Leduc with 3 boards a value, no imaginary observations: inside the interval
    around the exact value, with less spread."""
    game = load_game("leduc.limit.2p.game")
    specs = [str(strategy_path("leduc.limit.2p.strat")), "builtin:random"]
    _, exact = _exact(game, specs)
    got = _played(game, specs, [21, 22], 60, [True, True], walk_samples=3,
                  imaginary=False)
    est = estimate(got.aivat, got.hands)
    assert est.ci_low <= exact <= est.ci_high, (est, exact)
    assert est.se < 0.9 * estimate(got.raw, got.hands).se
