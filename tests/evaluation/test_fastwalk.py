"""The numba walk of ``--estimator sampled-agents`` (:mod:`evaluation.estimators.fastwalk`) against
its slow oracle, the Python reference walk (:class:`evaluation.estimators.estimator._JointWalk`):
the same values deal by deal (tolerance 1e-9) for several seeds, both seatings, both
mappings of the default run and more, both size conventions, purifications ``none``,
``full`` and a threshold; an estimate that agrees with played matches; and each kernel
helper against the code it mirrors (BLAKE2b against :mod:`hashlib`, the betting state
against :class:`~agent.acpc.betting.BettingState` on random play-outs, the mappings, the
bracket, the purification, the draw, the dealing). The tests whose names contain
``small`` run again with ``NUMBA_DISABLE_JIT=1`` (the kernels' plain-Python semantics).

The kernel needs the flop strength table of ``acpc-strategy cards --round flop`` (a minute
to build, cached outside the checkout): the tests that walk get the same values from the
fixture :func:`flop_table`, which computes each class's entry with the builder's own
function the first time a walk reads it, so they run on a fresh clone too.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterator
from typing import Any

import numba
import numpy as np
import pytest

from agent.abstraction import translation
from agent.abstraction.holdem_spec import preflop_class
from agent.abstraction.isomorphism import holdem_indexer
from agent.abstraction.translation import BUILTIN_MAPPINGS, bracket, bracket_in, get_mapping
from agent.acpc.betting import Action, ActionKind, BettingState
from agent.acpc.gamefiles import load_game
from agent.data import strategies_dir
from agent.strategy.purification import (
    KINDS,
    parse_purification,
    purify_row,
    sample_index,
    sample_index_in,
)
from evaluation.estimators import estimator
from evaluation.estimators import fastwalk as fw
from evaluation.estimators.estimator import FileAgent, joint_group_values, make_model
from evaluation.match.variants import parse_variant
from tests.support import NO_JIT, run_without_jit

fw.load_kernels()
DATA = strategies_dir()
HOLDEM = "holdem.nolimit.2p.reverse_blinds.game"
STRAT = DATA / "holdem.nolimit.2p.strat"


def test_small_blake2b_equals_hashlib() -> None:
    rng = random.Random(3)
    work = np.zeros(40, np.uint64)
    iv, sigma = fw.blake2b_tables()
    for n in [1, 2, 7, 8, 9, 63, 64, 127, 128, 129, 200, 255, 256, 257, 400]:
        data = bytes(rng.randrange(256) for _ in range(n))
        got = fw.blake2b_u64(np.frombuffer(data, np.uint8), n, iv, sigma, work)
        want = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
        assert int(got) == want, n


def test_small_preflop_classes_equal_the_abstraction() -> None:
    holes = np.array(list(itertools.permutations(range(52), 2)), np.int64)
    got = fw.preflop_classes(holes)
    assert got.tolist() == [preflop_class(h) for h in holes.tolist()]
    assert sorted(set(got.tolist())) == list(range(169))


def _state_buffers() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's betting-state buffers: state, action kinds, actors, betting text,
    raise bounds."""
    return (np.zeros(16, np.int64), np.zeros(72, np.int64), np.zeros(72, np.int64),
            np.zeros(1024, np.uint8), np.zeros(2, np.int64))


_KIND = {ActionKind.FOLD: fw.FOLD, ActionKind.CALL: fw.CALL, ActionKind.RAISE: fw.RAISE}


def test_small_betting_state_equals_the_rules_engine() -> None:
    """Random legal play-outs of heads-up no-limit hold'em (min raises, all-ins, folds):
    after every action the kernel's state, betting text, raise bounds and fold rule are
    the engine's; at the end, the payoffs."""
    game = load_game(HOLDEM)
    rng = random.Random(11)
    stack = np.array(game.stack, np.int64)
    blind = np.array(game.blind, np.int64)
    first = np.array(game.first_player, np.int64)
    max_raises = np.array(game.max_raises, np.int64)
    st, kinds, actors, bet, bounds = _state_buffers()
    for _ in range(150 if NO_JIT else 600):
        state = BettingState.initial(game)
        fw._initial(st, stack, blind, first)
        while True:
            assert st[fw._PL] == (-1 if state.finished else state.player)
            assert (st[fw._SP], st[fw._SP + 1]) == state.spent
            assert bytes(bet[:st[fw._BLEN]]).decode() == state.betting
            assert st[fw._RD] == state.round and bool(st[fw._FIN]) == state.finished
            if state.finished:
                break
            assert fw._can_fold(st, stack) == state.can_fold()
            got = fw._raise_bounds(st, stack, max_raises, kinds, bounds)
            want = state.raise_bounds()
            assert ((int(bounds[0]), int(bounds[1])) if got else None) == want
            assert fw._to_call(st, stack, state.player) == state.to_call()
            legal = state.legal_actions()
            kind = rng.choice(legal)
            size = 0
            if kind is ActionKind.RAISE:
                assert want is not None
                lo, hi = want
                size = rng.choice([lo, hi, rng.randint(lo, hi)])
            action = Action(kind, size)
            state = state.apply(action)
            assert fw._apply(st, _KIND[kind], size, stack, game.big_blind, game.num_rounds,
                             first, kinds, actors, bet)
        for ranks in ((1, 0), (0, 0), (0, 1)):
            want_value = state.payoffs(ranks if state.is_showdown else None)[0]
            if state.is_showdown:
                got_value = fw._showdown_value(st[fw._SP], st[fw._SP + 1], *ranks)
                assert got_value == want_value


@numba.njit(cache=False)
def _compiled_rules(sizes: np.ndarray, x: float, row: np.ndarray, k: int, kind: int,
                    threshold: float, u: float) -> tuple[int, int, bool, int]:
    """The agent's rules as the kernel runs them: compiled from the same functions."""
    lo, hi = bracket_in(sizes, len(sizes), x)
    ok = purify_row(row, k, kind, threshold)
    return lo, hi, ok, sample_index_in(row, k, u)


def test_small_mappings_bracket_purification_and_draws() -> None:
    """The kernel runs the agent's own rules compiled (the one table of mappings through
    the generated dispatch; the bracket, the purification and the draw compiled from the
    same functions): the compiled forms give the Python functions' values, exactly."""
    assert tuple(BUILTIN_MAPPINGS) == fw.MAPPINGS and fw.PURIFICATIONS == KINDS
    rng = random.Random(5)
    sizes = np.array([0.0, 0.5, 1.0, 2.0, 7.5], np.float64)
    for _ in range(300 if NO_JIT else 3000):
        x = rng.choice([rng.uniform(-0.5, 9.0), rng.choice(sizes.tolist()) + 1e-12])
        a, b = sorted(rng.sample(sizes.tolist(), 2))
        for i, name in enumerate(fw.MAPPINGS):
            assert fw._mapping(i, a, b, x) == float(BUILTIN_MAPPINGS[name](a, b, x)), name
        k = rng.randint(1, 5)
        row = [rng.choice([0.0, rng.random(), 0.25]) for _ in range(k)]
        if max(row) <= 0.0:
            row[0] = 0.5
        for spec in ("none", "full", "threshold:0.3"):
            p = parse_purification(spec)
            arr = np.array(row, np.float64)
            u = rng.random()
            lo, hi, ok, i = _compiled_rules(sizes, x, arr, k, KINDS.index(p.kind),
                                            p.threshold, u)
            want = p.apply(row)
            assert ok and arr.tolist() == want
            assert (lo, hi) == bracket(sizes.tolist(), x)
            assert i == sample_index(want, u)
    assert not _compiled_rules(sizes, 1.0, np.zeros(3), 3, 1, 0.0, 0.5)[2]  # no mass


def test_a_plugin_mapping_takes_the_python_walk_and_says_so_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A mapping that is not in the table (``module:function`` here; an entry point is
    the same to the walk) cannot be compiled: ``acpc-match --estimator sampled-agents``
    says so in one line on stderr, and the Python walk gives the values the built-in
    function gives."""
    from evaluation.cli import main

    plugin = "agent.abstraction.translation:rand_pshar"
    game = load_game(HOLDEM)
    agent = make_model(parse_variant(f"a={STRAT},mapping={plugin}"), game, shared={})
    assert isinstance(agent, FileAgent) and translation.mapping_index(agent.mapping) is None
    with pytest.warns(fw.SlowPathWarning, match=r"mapping '.*:rand_pshar' is a plug-in"):
        assert fw.numba_walk_for([agent], {}, lambda c, h: None) is None
    argv = ["--estimator", "sampled-agents", "--game", HOLDEM, "--hands", "3",
            "--matches", "1", "--quiet"]
    got = {}
    for name, mapping in (("plugin", plugin), ("builtin", "rand-pshar")):
        capsys.readouterr()
        assert main([*argv, "--variant", f"{name}={STRAT},mapping={mapping}",
                     "--variant", "r=builtin:random"]) == 0
        out, err = capsys.readouterr()
        got[name] = out.splitlines()[1].split()[3:-1]  # the pair's estimate (not the CPU)
        notes = [line for line in err.splitlines() if "plug-in" in line]
        assert len(notes) == (1 if name == "plugin" else 0), err
        assert all(n.startswith("acpc-match: warning: mapping ") for n in notes)
    assert got["plugin"] == got["builtin"]


def _variants() -> list[str]:
    return [f"rp={STRAT},mapping=rand-pshar", f"da={STRAT},mapping=det-arith",
            f"rpf={STRAT},mapping=rand-pshar,purify=full",
            f"rg={STRAT},mapping=rand-geo-2,purify=threshold:0.2",
            f"dp={STRAT},mapping=det-pshar,purify=full",
            f"rr={STRAT},mapping=rand-pshar,sizes=real",
            f"dr={STRAT},mapping=det-arith,purify=full,sizes=real", "r=builtin:random"]


class _FlopTable:
    """The flop E[HS^2] table of ``acpc-strategy cards --round flop`` as the estimator reads
    it (an array indexed by the lossless flop class), each entry computed by
    :func:`strategies.cards.tables.strength_values` (the builder's own kernel) the first time
    it is read: the full table's values on the classes the walks visit."""

    def __init__(self, flop_rivers_per_turn: int) -> None:
        self.rivers = flop_rivers_per_turn
        self.values = np.full(holdem_indexer("board", 1).size(1), np.nan)

    def __getitem__(self, index: Any) -> Any:
        from strategies.cards.tables import strength_values

        wanted = np.atleast_1d(np.asarray(index, np.int64))
        for i in np.unique(wanted[np.isnan(self.values[wanted])]).tolist():
            self.values[i] = strength_values(1, i, i + 1, flop_rivers_per_turn=self.rivers)[1][0]
        return self.values[index]


_FLOP_TABLES: dict[int, _FlopTable] = {}
"""By the estimator's parameter: the entries computed once per process."""


@pytest.fixture
def flop_table() -> Iterator[None]:
    """The estimator finds a flop table (:class:`_FlopTable`) where it looks for the cached
    one; every model made in the test gets the kernel's flop buckets from it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(estimator, "_cached_flop_table",
                      lambda k: _FLOP_TABLES.setdefault(k, _FlopTable(k)))
        yield


def _has_flop_table() -> bool:
    game = load_game(HOLDEM)
    agent = make_model(parse_variant(_variants()[0]), game, shared={})
    return isinstance(agent, FileAgent) and agent.flop is not None


def test_the_flop_table_is_the_builders(flop_table: None) -> None:
    """The fixture's entries are those of :func:`build_strength_table` (the first classes
    of a partial build) and give the bundled file's flop buckets."""
    from strategies.cards.tables import build_strength_table

    assert _has_flop_table()
    agent = make_model(parse_variant(f"a={STRAT}"), load_game(HOLDEM), shared={})
    assert isinstance(agent, FileAgent)
    cards = agent.loaded.cards
    table = estimator._cached_flop_table(cards.flop_rivers_per_turn)
    built = build_strength_table(1, flop_rivers_per_turn=cards.flop_rivers_per_turn, stop=50)
    assert table[7] == built.ehs2[7]
    assert table[np.arange(50)].tolist() == built.ehs2.tolist()
    hand = holdem_indexer("board", 1).unindex(1, 42)
    assert agent.flop is not None
    assert agent.flop(hand[:2], hand[2:]) == cards.bucket(1, hand[:2], hand[2:])


@pytest.mark.skipif(NO_JIT, reason="the card kernels take minutes as plain Python")
@pytest.mark.parametrize("seed", [1, 7, 2024])
def test_kernel_walk_equals_the_reference_walk(seed: int, flop_table: None) -> None:
    """The slow oracle: every variant, deal by deal and seating by seating, gets the
    reference walk's values from the kernel."""
    assert _has_flop_table()
    game = load_game(HOLDEM)
    variants = [parse_variant(t) for t in _variants()]
    groups = [(v.name, "r") for v in variants[:-1]]
    shared: dict[tuple[str, str | None], object] = {}
    models = [make_model(v, game, shared=shared) for v in variants]
    kernel = joint_group_values(game, models[:-1], models[-1], master_seed=seed, units=2,
                                hands=100, groups=groups, sample=True, walk="auto")
    for m in (models[0], models[-2]):  # the loads for either size convention
        walks = [w for _, w in m.cards.kernels.values()]  # type: ignore[attr-defined]
        assert len(walks) == 1 and walks[0] is not None and walks[0].nodes_filled > 0
    shared = {}
    models = [make_model(v, game, shared=shared) for v in variants]
    ref = joint_group_values(game, models[:-1], models[-1], master_seed=seed, units=2,
                             hands=100, groups=groups, sample=True, walk="reference")
    for k, r in zip(kernel, ref, strict=True):
        flat = [v for pair in k.seatings for v in pair]
        assert flat == pytest.approx([v for pair in r.seatings for v in pair], abs=1e-9)
        assert k.classes == r.classes and k.units == r.units
    # the variants really differ on some deals, and both seatings have showdowns and folds
    assert any(a.seatings != b.seatings for a, b in itertools.combinations(kernel, 2))
    assert len({v for pair in kernel[0].seatings for v in pair}) > 20


def test_the_kernel_declines_what_it_does_not_cover() -> None:
    """Leduc, no flop table, features or the exact walk: the Python walk
    (``numba_walk_for`` gives None or is never asked)."""
    game = load_game(HOLDEM)
    shared: dict[tuple[str, str | None], object] = {}
    real = make_model(parse_variant(f"a={STRAT},mapping=rand-pshar,sizes=real"), game,
                      shared=shared)
    rnd = make_model(parse_variant("r=builtin:random"), game)
    assert fw.numba_walk_for([real], {ActionKind.FOLD: 0.06, ActionKind.CALL: 0.47,
                                      ActionKind.RAISE: 0.47}, None) is None
    for sample, features in ((False, False), (True, True)):
        joint_group_values(game, [real], rnd, master_seed=1, units=1, hands=3,
                           groups=[("a", "r")], sample=sample, features=features)
        assert not real.cards.kernels  # type: ignore[attr-defined]
    leduc = load_game("leduc.nolimit.2p.game")
    agent = make_model(parse_variant(f"a={DATA / 'leduc.nolimit.2p.fcpa.strat'}"), leduc,
                       shared={})
    assert fw.numba_walk_for([agent], {}, lambda c, h: None) is None
    with pytest.raises(ValueError, match="expected a walk in auto, reference"):
        joint_group_values(game, [real], rnd, master_seed=1, units=1, hands=1,
                           groups=[("a", "r")], walk="numba")


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests again with NUMBA_DISABLE_JIT=1."""
    run_without_jit(__file__)


def test_small_dealing_equals_the_dealer() -> None:
    from agent.acpc.cards import deck_for
    from agent.acpc.dealing import deal_hands

    game = load_game(HOLDEM)
    deck = np.array(deck_for(game), np.int64)
    for seed in (0, 5489, 123_456_789, 2**32 - 1):
        out = np.zeros((700, 9), np.int64)  # past one MT19937 twist (624 words)
        fw.deal_cards(seed, deck, out)
        dealt = deal_hands(game, seed)
        want = [[c for hole in d.hole for c in hole] + list(d.board)
                for d in (next(dealt) for _ in range(700))]
        assert out.tolist() == want


@pytest.mark.skipif(NO_JIT, reason="the card kernels take minutes as plain Python")
def test_kernel_estimate_agrees_with_played_matches(flop_table: None) -> None:
    """Unbiased: the kernel's estimate of rand-pshar against random and played in-process
    matches of the same seeds agree within their combined interval, the kernel's with
    the smaller one."""
    import math

    from evaluation.match.schedule import plan_jobs
    from evaluation.match.worker import MatchSettings, run_job
    from evaluation.stats import estimate

    assert _has_flop_table()
    game = load_game(HOLDEM)
    agent = parse_variant(f"a={STRAT},mapping=rand-pshar")
    rnd = parse_variant("r=builtin:random")
    hands = 400
    jobs = plan_jobs([agent, rnd], [("a", "r")], master_seed=4, matches=1, hands=hands)
    settings = MatchSettings(game_spec=HOLDEM, transport="inproc")
    outs = [run_job(j, {"a": agent, "r": rnd}, settings) for j in jobs]
    assert all(o.ok for o in outs)
    played = [0.5 * (x[0] + y[1]) for x, y in zip(outs[0].values, outs[1].values,
                                                  strict=True)]
    old = estimate(played, 2 * hands)
    shared: dict[tuple[str, str | None], object] = {}
    models = [make_model(v, game, shared=shared) for v in (agent, rnd)]
    g = joint_group_values(game, models[:1], models[1], master_seed=4, units=1, hands=hands,
                           groups=[("a", "r")], sample=True)[0]
    kernels = models[0].cards.kernels  # type: ignore[attr-defined]
    assert any(w is not None for _, w in kernels.values())  # the kernel walked them
    new = estimate(g.values, 2 * hands)
    assert abs(old.mean - new.mean) <= 1.96 * math.hypot(old.se, new.se), (old, new)
    assert new.se < old.se


@pytest.mark.skipif(NO_JIT, reason="loading the hold'em file warms its kernels: minutes as "
                    "plain Python")
def test_real_convention_brackets_equal_the_agent() -> None:
    """``bracket_sizes`` and ``read_bet`` in the ``real`` convention: the kernel's sizes,
    options and all-in rule at abstract nodes of the bundled hold'em file, in real states
    of random play-outs (where the other pot differs from the node's)."""
    from agent.abstraction.convention import REAL, bracket_sizes, read_bet
    from agent.acpc.betsize import pot_after_call

    game = load_game(HOLDEM)
    agent = make_model(parse_variant(f"a={STRAT},sizes=real"), game, shared={})
    assert isinstance(agent, FileAgent)
    from agent.builtin import RandomPolicy

    walk = fw.NumbaWalk([agent], RandomPolicy.WEIGHTS, lambda c, h: None)
    nodes = []
    for i in range(400):
        walk.fill(i)
        if fw.RAISE in walk.akind[i, :walk.nact[i]].tolist() and walk.call_child[i] >= 0:
            nodes.append(i)
    rng = random.Random(2)
    stack = np.array(game.stack, np.int64)
    max_raises = np.array(game.max_raises, np.int64)
    st, kinds, actors, bet, bounds = _state_buffers()
    width = walk.akind.shape[1] + 1
    sizes, opts = np.zeros(width), np.zeros(width, np.int64)
    tos, idx = np.zeros(width, np.int64), np.zeros(width, np.int64)
    checked = 0
    for _ in range(200):
        state = BettingState.initial(game)
        fw._initial(st, stack, np.array(game.blind, np.int64),
                    np.array(game.first_player, np.int64))
        while not state.finished:
            real = state.raise_bounds()
            if real is not None:
                assert fw._raise_bounds(st, stack, max_raises, kinds, bounds)
                base = pot_after_call(state)
                for i in rng.sample(nodes, 3):
                    node = agent.tree.nodes[i]
                    n = fw._real_sizes(st, base, i, walk.nact, walk.akind, walk.afrac,
                                       walk.call_index, True, bounds, sizes, opts, tos, idx)
                    want_sizes, want_opts = bracket_sizes(state, node, REAL)
                    assert sizes[:n].tolist() == list(want_sizes)
                    assert opts[:n].tolist() == list(want_opts)
                    reading = read_bet(state, node, real[1], REAL)
                    if reading.all_in:  # the real all-in is the node's abstract all-in
                        assert walk.afrac[i, opts[reading.low]] == fw._ALL_IN
                    checked += 1
            kind = rng.choice(state.legal_actions())
            size = rng.randint(*real) if kind is ActionKind.RAISE and real else 0
            state = state.apply(Action(kind, size))
            fw._apply(st, _KIND[kind], size, stack, game.big_blind, game.num_rounds,
                      np.array(game.first_player, np.int64), kinds, actors, bet)
    assert checked > 100


@pytest.mark.skipif(NO_JIT, reason="the card kernels take minutes as plain Python")
def test_kernel_walk_of_a_quantized_file_equals_the_reference_walk(flop_table: None) -> None:
    """A uint16 file (rows in 1/65535): the kernel's rows are the file's own."""
    import dataclasses
    from types import SimpleNamespace

    from agent.strategy.fileformat import quantize_rows
    from evaluation.estimators.estimator import CardCache

    assert _has_flop_table()
    game = load_game(HOLDEM)
    base = make_model(parse_variant(f"a={STRAT}"), game, shared={})
    assert isinstance(base, FileAgent)
    strategy = base.loaded.strategy
    quantized = dataclasses.replace(
        strategy, table=quantize_rows(strategy.table, strategy.layout))
    loaded = dataclasses.replace(base.loaded, strategy=quantized)
    rnd = make_model(parse_variant("r=builtin:random"), game)
    values = {}
    for walk in ("auto", "reference"):
        cache = CardCache()
        agents = [FileAgent(SimpleNamespace(loaded=loaded, mapping=get_mapping(m),
                                            purification=parse_purification(p),
                                            sizes_in="abstract"), cache)
                  for m, p in (("rand-pshar", "none"), ("det-arith", "full"))]
        got = joint_group_values(game, agents, rnd, master_seed=3, units=1, hands=150,
                                 groups=[("a", "r"), ("b", "r")], sample=True, walk=walk)
        kernel_ran = any(w is not None for _, w in cache.kernels.values())
        assert kernel_ran == (walk == "auto")
        values[walk] = [v for g in got for pair in g.seatings for v in pair]
    assert quantized.table.dtype == np.dtype("<u2")
    assert values["auto"] == pytest.approx(values["reference"], abs=1e-9)
