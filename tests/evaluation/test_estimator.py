"""``acpc-match --estimator exact-agents`` (issue 18, item 4): the model of a strategy-file
agent plays exactly like the real policy (same draws, same actions and values as a played
in-process match), and the estimate is unbiased: in no-limit Leduc it converges to the
exact value of ``acpc-match --exact`` with a shrinking interval; in hold'em it agrees with
played matches of the same seeds."""

from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from agent.acpc.dealing import deal_hands
from agent.acpc.gamefiles import load_game
from agent.builtin import RandomPolicy
from agent.data import strategies_dir
from evaluation.estimators.estimator import (
    FEATURES,
    FileAgent,
    RandomAgent,
    class_probabilities,
    cross_fit,
    group_values,
    joint_group_values,
    make_model,
    play_hand,
    showdown_odds,
)
from evaluation.match.schedule import plan_jobs
from evaluation.match.variants import Variant, make_seat_policy, parse_variant
from evaluation.match.worker import MatchSettings, run_job
from evaluation.stats import estimate
from tests.support import ROOT

DATA = strategies_dir()
HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
LEDUC = "leduc.nolimit.2p.game"


def _state_lines(log: str) -> list[list[str]]:
    return [line.split(":") for line in log.splitlines() if line.startswith("STATE:")]


@pytest.mark.parametrize(("game_name", "strat", "mapping", "hands", "lazy"), [
    (HOLDEM, "holdem.nolimit.2p.strat", "rand-pshar", 120, False),
    (HOLDEM, "holdem.nolimit.2p.strat", "rand-pshar", 100, True),
    (HOLDEM, "holdem.nolimit.2p.strat", "det-arith", 100, False),
    (LEDUC, "leduc.nolimit.2p.fcpa.strat", "rand-pshar", 300, False),
    (LEDUC, "leduc.nolimit.2p.fcpa.strat", "rand-pshar", 300, True),
])
def test_the_model_plays_like_the_policy(game_name: str, strat: str, mapping: str,
                                         hands: int, lazy: bool) -> None:
    """The slow oracle: a played in-process match, and the same hands replayed by the
    model with the policy's own draws and the real opponent: same betting, same values."""
    game = load_game(game_name)
    agent = parse_variant(f"a={DATA / strat},mapping={mapping}")
    rnd = parse_variant("r=builtin:random")
    settings = MatchSettings(game_spec=game_name, transport="inproc")
    job = plan_jobs([agent, rnd], [("a", "r")], master_seed=5, matches=1, hands=hands)[0]
    outcome = run_job(job, {"a": agent, "r": rnd}, settings)
    assert outcome.ok, outcome.error
    lines = _state_lines(outcome.log_text)
    model = FileAgent(make_seat_policy(agent, game, 0))
    draws = random.Random(job.agent_seeds[0]).random  # the policy's rng, hand after hand
    opponent = RandomPolicy(job.agent_seeds[1])
    deals = deal_hands(game, job.deal_seed)
    translated = 0
    for h, parts in enumerate(lines):
        deal = next(deals)
        pos = (0 - h) % 2  # the agent's position in hand h (seat 0, seats rotate)
        models = [model, model]  # the opponent's slot is played by the real policy
        opponents = [None, None]
        opponents[1 - pos] = opponent
        betting, value = play_hand(models, deal, [draws, draws], opponents, game, h, lazy)
        assert betting == parts[2], (h, betting, parts[2])
        names, values = parts[5].split("|"), [float(x) for x in parts[4].split("|")]
        assert names[pos] == "a"
        assert value * (1 if pos == 0 else -1) == pytest.approx(values[0] if pos == 0
                                                                 else -values[0])
        translated += sum(1 for c in betting if c == "r")
    assert translated > hands  # the random opponent's raises were read many times


def _leduc_exact() -> float:
    from evaluation.estimators.exact import ExactArena, Player

    arena = ExactArena(load_game(LEDUC))
    pshar = Player("pshar", str(DATA / "leduc.nolimit.2p.fcpa.strat"), mapping="rand-pshar")
    return arena.value(pshar, Player("rnd", "builtin:random"))[0]


def test_leduc_estimate_converges_to_the_exact_value() -> None:
    game = load_game(LEDUC)
    exact = _leduc_exact()
    agent = make_model(parse_variant(f"a={DATA / 'leduc.nolimit.2p.fcpa.strat'},"
                                     "mapping=rand-pshar"), game)
    probs = class_probabilities(game)
    halves = []
    for expand, sample in ((False, False), (True, False), (False, True)):
        rnd = RandomAgent(game, expand=expand)
        g = group_values(game, (agent, rnd), master_seed=11, units=5, hands=120,
                         group=("a", "r"), sample=sample)
        small = estimate(g.values[:150], 300)
        large = estimate(g.values, 1200)
        controlled = estimate(g.controlled(probs), 1200)
        for e in (small, large, controlled):
            assert e.ci_low <= exact <= e.ci_high, (expand, sample, e, exact)
        assert large.half_width < 0.7 * small.half_width
        halves.append(large.half_width)
    # expanding random's kinds integrates more: a narrower interval on the same deals;
    # sampling the agent's draws, a wider one
    assert halves[1] < halves[0] < halves[2]


def test_holdem_estimate_agrees_with_played_matches() -> None:
    game = load_game(HOLDEM)
    agent = parse_variant(f"a={DATA / 'holdem.nolimit.2p.strat'},mapping=det-arith")
    rnd = parse_variant("r=builtin:random")
    settings = MatchSettings(game_spec=HOLDEM, transport="inproc")
    hands = 300
    jobs = plan_jobs([agent, rnd], [("a", "r")], master_seed=3, matches=1, hands=hands)
    outs = [run_job(j, {"a": agent, "r": rnd}, settings) for j in jobs]
    assert all(o.ok for o in outs)
    played = [0.5 * (x[0] + y[1]) for x, y in zip(outs[0].values, outs[1].values,
                                                  strict=True)]
    old = estimate(played, 2 * hands)
    for sample in (False, True):
        g = group_values(game, (make_model(agent, game), make_model(rnd, game)),
                         master_seed=3, units=1, hands=hands, group=("a", "r"),
                         sample=sample)
        new = estimate(g.values, 2 * hands)
        assert abs(old.mean - new.mean) <= 1.96 * math.hypot(old.se, new.se), (old, new)
        assert new.se < old.se  # the same deals, less noise


def test_showdown_odds_against_a_hand_count() -> None:
    game = load_game(LEDUC)
    # Leduc: a king (cards by rank) on a board pairing it wins against every other card
    deals = deal_hands(game, 1)
    deal = next(deals)
    win, tie, lose = showdown_odds(game, deal.hole[0], deal.board[:1])
    assert win + tie + lose == pytest.approx(1.0)
    assert min(win, tie, lose) >= 0.0
    holdem = load_game(HOLDEM)
    # a dealt hold'em showdown against a count over every opponent hole
    from itertools import combinations

    from agent.acpc.cards import deck_for
    from agent.acpc.evaluator import rank_hand

    d = next(deal_hands(holdem, 3))
    mine = rank_hand([*d.hole[0], *d.board])
    rest = [c for c in deck_for(holdem) if c not in (*d.hole[0], *d.board)]
    theirs = [rank_hand([*c, *d.board]) for c in combinations(rest, 2)]
    n = len(theirs)
    assert n == 990
    assert showdown_odds(holdem, d.hole[0], d.board) == pytest.approx(
        (sum(r < mine for r in theirs) / n, sum(r == mine for r in theirs) / n,
         sum(r > mine for r in theirs) / n))
    # royal flush on board: every hand ties
    board = [51, 47, 43, 39, 35]  # A, K, Q, J, T of one suit (rank * 4 + suit)
    assert showdown_odds(holdem, [0, 1], board) == (0.0, 1.0, 0.0)


def test_cli_estimator(tmp_path: Path) -> None:
    out = tmp_path / "e.json"
    proc = subprocess.run(
        [sys.executable, "-m", "evaluation.cli", "--estimator", "sampled-agents", "--game",
         LEDUC, "-v", f"a={DATA / 'leduc.nolimit.2p.fcpa.strat'},mapping=rand-pshar",
         "-v", f"b={DATA / 'leduc.nolimit.2p.fcpa.strat'},mapping=det-arith",
         "-v", "r=builtin:random", "--hands", "100", "--matches", "2", "--json", str(out),
         "--quiet"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = {r["comparison"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["a vs r"]["mean"] == pytest.approx(-rows["r vs a"]["mean"])
    diff = rows["a - b vs r"]
    assert diff["mean"] == pytest.approx(rows["a vs r"]["mean"] - rows["b vs r"]["mean"],
                                         abs=2 * rows["a vs r"]["se"])
    bad = subprocess.run(
        [sys.executable, "-m", "evaluation.cli", "--estimator", "exact-agents", "--game",
         LEDUC, "-v", "a=cmd=./player", "-v", "r=builtin:random"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert bad.returncode == 1
    assert "expected strategy files or built-ins" in bad.stderr
    mixed = subprocess.run(
        [sys.executable, "-m", "evaluation.cli", "--estimator", "exact-agents",
         "--transport", "inproc"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert mixed.returncode == 2
    assert "--transport apply to played matches, not to --estimator exact-agents" in (
        mixed.stderr)


def test_hole_classes() -> None:
    probs = class_probabilities(load_game(HOLDEM))
    assert len(probs) == 169
    assert sum(probs.values()) == pytest.approx(1.0)
    assert probs[(12, 12, 0)] == pytest.approx(6 / 1326)  # aces
    assert probs[(12, 11, 1)] == pytest.approx(4 / 1326)  # ace-king suited


def test_exact_and_estimator_exclude_each_other() -> None:
    from evaluation.cli import main

    assert main(["--exact", "--estimator", "sampled-agents", "--game", LEDUC,
                 "-v", "a=builtin:call", "-v", "b=builtin:random"]) == 2


def test_variants_of_one_file_share_it_with_their_own_options() -> None:
    game = load_game(LEDUC)
    shared: dict[tuple[str, str | None], object] = {}
    path = DATA / "leduc.nolimit.2p.fcpa.strat"
    a = make_model(parse_variant(f"a={path},mapping=rand-pshar"), game, shared=shared)
    b = make_model(parse_variant(f"b={path},mapping=det-arith,purify=full"), game,
                   shared=shared)
    alone = FileAgent(make_seat_policy(parse_variant(f"b={path},mapping=det-arith,"
                                                     "purify=full"), game, 0))
    assert isinstance(a, FileAgent) and isinstance(b, FileAgent)
    assert len(shared) == 1 and a.loaded is b.loaded
    assert a.mapping is not b.mapping
    assert (b.mapping, b.purification, b.sizes_in) == (alone.mapping, alone.purification,
                                                       alone.sizes_in)


# ---------------------------------------------------------------- the joint walk


def _file_variants(strat: str) -> list[Variant]:
    return [parse_variant(f"a={DATA / strat},mapping=rand-pshar"),
            parse_variant(f"b={DATA / strat},mapping=det-arith"),
            parse_variant("r=builtin:random")]


@pytest.mark.parametrize(("game_name", "strat", "hands"), [
    (HOLDEM, "holdem.nolimit.2p.strat", 60),
    (LEDUC, "leduc.nolimit.2p.fcpa.strat", 150),
])
@pytest.mark.parametrize("sample", [True, False])
def test_joint_walk_equals_the_separate_walks(game_name: str, strat: str, hands: int,
                                              sample: bool) -> None:
    """The slow oracle of the joint walk: one walk of both variants against random gives
    each variant exactly the values of its own walk, deal by deal and seating by seating,
    and its features do not change them."""
    game = load_game(game_name)
    variants = _file_variants(strat)
    alone = {v.name: make_model(v, game) for v in variants}
    shared: dict[tuple[str, str | None], object] = {}
    joint = [make_model(v, game, shared=shared) for v in variants]
    for features in (False, True):
        ga, gb = joint_group_values(game, joint[:2], joint[2], master_seed=9, units=2,
                                    hands=hands // 2, groups=[("a", "r"), ("b", "r")],
                                    sample=sample, features=features)
        for name, g in (("a", ga), ("b", gb)):
            sep = group_values(game, (alone[name], alone["r"]), master_seed=9, units=2,
                               hands=hands // 2, group=(name, "r"), sample=sample)
            flat = [v for pair in g.seatings for v in pair]
            assert flat == pytest.approx([v for pair in sep.seatings for v in pair],
                                         abs=1e-9)
            assert g.classes == sep.classes and g.units == sep.units
            assert len(g.features) == (len(g.seatings) if features else 0)
    # the variants really differ on some deals (the walk split there) and agree on others
    diffs = [x[0] - y[0] for x, y in zip(ga.seatings, gb.seatings, strict=True)]
    assert any(d != 0 for d in diffs) and any(d == 0 for d in diffs)


def test_heads_up_river_odds_from_the_kernel() -> None:
    """On a hold'em river the kernel's (HS, 0, 1 - HS) is worth the exact odds in a
    heads-up showdown: the same win - lose, and so the same value."""
    from evaluation.estimators.estimator import _heads_up_odds

    game = load_game(HOLDEM)
    rng = random.Random(4)
    for _ in range(40):
        cards = rng.sample(range(52), 7)
        win, _, lose = showdown_odds(game, cards[:2], cards[2:])
        hs, zero, rest = _heads_up_odds(game, cards[:2], cards[2:])
        assert zero == 0.0 and hs + rest == pytest.approx(1.0)
        assert hs - rest == pytest.approx(win - lose, abs=1e-12)
    leduc = load_game(LEDUC)
    d = next(deal_hands(leduc, 2))
    assert _heads_up_odds(leduc, d.hole[0], d.board) == showdown_odds(leduc, d.hole[0],
                                                                       d.board)


def test_random_terms_have_mean_zero_and_keep_the_estimate_unbiased() -> None:
    """The AIVAT-style terms at random's decisions average to 0 (each has mean 0 given
    the history), and the cross-fitted correction in no-limit Leduc stays around the exact
    value with a narrower interval than the plain mean (7 % here; 20-30 % on hold'em)."""
    game = load_game(LEDUC)
    exact = _leduc_exact()
    agent = make_model(parse_variant(f"a={DATA / 'leduc.nolimit.2p.fcpa.strat'},"
                                     "mapping=rand-pshar"), game)
    rnd = make_model(parse_variant("r=builtin:random"), game)
    (g,) = joint_group_values(game, [agent], rnd, master_seed=21, units=4, hands=300,
                              groups=[("a", "r")], sample=True, features=True)
    n = len(g.features)
    for i in range(len(FEATURES)):
        xs = [f0[i] + f1[i] for f0, f1 in g.features]
        mean = math.fsum(xs) / n
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
        assert sd > 0.0, FEATURES[i]
        assert abs(mean) <= 4.0 * sd / math.sqrt(n), (FEATURES[i], mean, sd)
    probs = class_probabilities(game)
    plain = estimate(g.values, 2 * n)
    corrected = estimate(g.controlled(probs, by_class=False), 2 * n)
    for e in (plain, corrected):
        assert e.ci_low <= exact <= e.ci_high, (e, exact)
    assert corrected.half_width < plain.half_width


def test_cross_fit_keeps_the_mean_and_removes_what_the_terms_explain() -> None:
    rng = random.Random(5)
    n = 400
    xs = [([rng.gauss(0.0, 1.0)], [rng.gauss(0.0, 1.0)]) for _ in range(n)]
    seatings = [(3.0 + 5.0 * x0[0] + rng.gauss(0.0, 0.5), 3.0 + 5.0 * x1[0]
                 + rng.gauss(0.0, 0.5)) for x0, x1 in xs]
    classes = [((0,), (0,))] * n
    plain = [0.5 * (a + b) for a, b in seatings]
    fitted = cross_fit(seatings, classes, {(0,): 1.0}, xs)
    assert statistics.stdev(fitted) < 0.2 * statistics.stdev(plain)
    assert statistics.fmean(fitted) == pytest.approx(3.0, abs=0.1)
    # too few deals to fit: the plain means
    assert cross_fit(seatings[:9], classes[:9], {(0,): 1.0}, xs[:9]) == plain[:9]
    assert cross_fit(seatings, classes, {(0,): 1.0}, None, by_class=False) == plain


def test_flop_buckets_by_class_equal_the_kernel() -> None:
    """The flop look-up (:func:`flop_buckets`) gives every hand of a class the bucket the
    abstraction computes for it: the table's value is computed once per class (here from
    the canonical hand, as ``acpc-strategy cards`` does) and read back for other hands of
    the class (suits permuted, the flop in another order)."""
    from agent.abstraction.holdem_buckets import ehs2
    from agent.abstraction.isomorphism import holdem_indexer
    from evaluation.estimators.estimator import flop_buckets

    cards = make_model(parse_variant(f"a={DATA / 'holdem.nolimit.2p.strat'}"),
                       load_game(HOLDEM)).loaded.cards  # type: ignore[attr-defined]
    ix = holdem_indexer("board", 1)
    rng = random.Random(6)
    classes = sorted(rng.sample(range(ix.size(1)), 60))
    table = {}
    for i in classes:
        hand = ix.unindex(1, i)
        table[i] = ehs2(hand[:2], hand[2:], flop_rivers_per_turn=cards.flop_rivers_per_turn)

    class Table:  # the array's interface, only the sampled classes
        def __getitem__(self, i: int) -> float:
            return table[i]

    look = flop_buckets(cards, Table())
    assert look is not None
    seen = set()
    for i in classes:
        hand = ix.unindex(1, i)
        for _ in range(3):
            perm = rng.sample(range(4), 4)
            moved = [c // 4 * 4 + perm[c % 4] for c in hand]
            hole, board = moved[:2], rng.sample(moved[2:], 3)
            assert ix.index([*hole, *board]) == i
            b = look(hole, board)
            assert b == cards.bucket(1, hole, board)
            seen.add(b)
    assert len(seen) > 3
    assert flop_buckets(object()) is None


def test_kernel_buckets_equal_the_abstraction() -> None:
    from evaluation.estimators.estimator import kernel_buckets

    cards = make_model(parse_variant(f"a={DATA / 'holdem.nolimit.2p.strat'}"),
                       load_game(HOLDEM)).loaded.cards  # type: ignore[attr-defined]
    look = kernel_buckets(cards)
    assert look is not None and kernel_buckets(object()) is None
    rng = random.Random(12)
    seen = set()
    for i in range(300):
        c = rng.sample(range(52), 7)
        r = 1 + i % 3
        board = c[2:4 + r]
        b = look(r, c[:2], board)
        assert b == cards.bucket(r, c[:2], board), (r, c)
        seen.add((r, b))
    assert len(seen) > 30
