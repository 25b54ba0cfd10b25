"""Learned bet sizes (issue 14): the transformation, the known answers, the files.

* Half-street no-limit Kuhn (antes 0.5, P2 may not bet): the learned size converges to
  sqrt(2) - 1, the bettor's value at a fixed size s is s(1 - s) / (6(1 + s)), and a range
  below (above) the equilibrium ends at P(H) = 1 (0).
* The transformation is exact: with the card players' strategies fixed, the transformed
  game at P(H) = q has the value of the game that bets B = (1 - q) L + q H.
* Checkpoints continue exactly; the learned spec builds in the ACPC tree, is solved into a
  version-2 strategy file, and the agent plays it over loopback against acpc-dealer with
  translation from the node's learned sizes (checked in the trace).
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import (
    ALL_IN,
    TREE_NODES_ENV,
    BettingAbstraction,
    build_tree,
    parse_betting_abstraction,
)
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamefiles import load_game
from strategies.measure.best_response import expected_values, exploitability
from strategies.sizes.learned import (
    LearnSpec,
    Rules,
    SizeLearner,
    SizingError,
    SizingGame,
    build_sizing_game,
    parse_learn,
    solve_fixed,
    with_fixed_size,
)
from tests.support import NO_JIT, ROOT, run_without_jit

KUHN = "kuhn.nolimit.2p.game"
HALF = ('{"name": "half-street", "fractions": [[[0.5]]], "players": [null, [[[]]]],'
        ' "all_in": false, "max_raises": [1]}')
SQRT2_1 = math.sqrt(2.0) - 1.0


def half_street() -> tuple[BettingAbstraction, Rules]:
    game = load_game(KUHN)
    # pot 1 = two antes of 0.5 (the textbook units); bets of any size
    return parse_betting_abstraction(HALF), Rules.of(game, min_bet=0.0, blinds=(0.5, 0.5),
                                                     stack=100.0)


def v_of(s: float) -> float:
    return s * (1.0 - s) / (6.0 * (1.0 + s))


@pytest.mark.parametrize("s", [0.1, 0.25, SQRT2_1, 0.5, 0.75, 0.9])
def test_half_street_value_at_every_fixed_size(s: float) -> None:
    spec, rules = half_street()
    game = with_fixed_size(load_game(KUHN), spec, "", s, rules=rules)
    table = solve_fixed(game, 20_000)
    result = exploitability(game, table)  # type: ignore[arg-type]
    assert result.nash_conv < 1e-4
    assert expected_values(game, table)[0] == pytest.approx(v_of(s), abs=1e-6)  # type: ignore[arg-type]


def learner_for(low: float, high: float) -> SizeLearner:
    spec, rules = half_street()
    game = build_sizing_game(load_game(KUHN), spec, learn=LearnSpec(frozenset({0}), None, low,
                                                                       high), rules=rules)
    return SizeLearner(game)


def test_half_street_learns_sqrt2_minus_1() -> None:
    learner = learner_for(0.1, 0.9)
    while learner.iteration < 1_000_000:
        learner.iterate(5_000)
    (size,) = learner.tail_sizes()
    assert abs(size - SQRT2_1) < 0.002
    assert learner.undetermined() == [False]
    learned = learner.learned_spec()
    assert learned.sequences == (("", (size,)),)


@pytest.mark.parametrize(("low", "high", "q"), [(0.1, 0.3, 1.0), (0.5, 0.9, 0.0)])
def test_range_off_the_equilibrium_ends_at_the_nearer_end(
    low: float, high: float, q: float
) -> None:
    learner = learner_for(low, high)
    learner.iterate(200_000)
    (size,) = learner.sizes
    assert (size - low) / (high - low) == pytest.approx(q, abs=1e-6)


def test_small_transformation_has_the_value_of_the_effective_size() -> None:
    """Fixed card strategies (random rows): the transformed game at P(H) = q is worth what
    the game betting B = (1 - q) L + q H is worth, in Leduc with both players learning."""
    game = load_game("leduc.nolimit.2p.game")
    base = parse_betting_abstraction("fcpa3")
    rules = Rules.of(game, stack=400.0)
    learn = LearnSpec(frozenset({0, 1}), frozenset({"", "c", "cbc/"}), 0.6, 1.4)
    transformed = build_sizing_game(game, base, learn=learn, rules=rules)
    assert [n.key for n in transformed.learned] == ["", "c", "cbc/"]
    rng = np.random.default_rng(3)
    qs = rng.random(len(transformed.learned))
    effective = [n.low + q * (n.high - n.low) for n, q in zip(transformed.learned, qs,
                                                              strict=True)]
    # the same base, each learned node betting its effective size
    overrides = {}
    for n, b in zip(transformed.learned, effective, strict=True):
        key = "".join(f"{tok}{effective[j]:g}" if j >= 0 else tok for tok, j in n.path)
        overrides[key] = (b,)
    fixed_spec = parse_betting_abstraction({**base.to_json(), "sequences": {
        k: list(v) for k, v in overrides.items()}})
    fixed = build_sizing_game(game, fixed_spec, rules=rules)
    # the same random strategy at every card-player information set of both games
    t_table = np.zeros(transformed.table_size)
    f_table = np.zeros(fixed.table_size)
    rows: dict[tuple[int, str], np.ndarray] = {}
    for g, table in ((transformed, t_table), (fixed, f_table)):
        for i, node in enumerate(g.nodes):
            if node.player < 0:
                continue
            k, start, n_rows = len(node.actions), int(g.offset[i]), int(g.rows[i])
            if node.player >= 2:
                j = node.learned
                table[start : start + 2] = (1 - qs[j], qs[j])
                continue
            bare = "".join(ch for ch in node.key if not (ch.isdigit() or ch in ".e-"))
            got = rows.setdefault((node.player, bare),
                                  rng.dirichlet(np.ones(k), size=n_rows).ravel())
            table[start : start + got.size] = got
    v_t = expected_values(transformed, t_table)  # type: ignore[arg-type]
    v_f = expected_values(fixed, f_table)  # type: ignore[arg-type]
    assert v_t[0] == pytest.approx(v_f[0], abs=1e-9)
    assert v_t[2] == pytest.approx(v_t[0], abs=1e-12)  # the sizing player is p0's team


def _oracle_learn(game: SizingGame, iterations: int, plus: bool, smoothing: int,
                  sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The published algorithm written plainly: recursion over the transformed tree,
    vectors over deals, simultaneous updates (the kernel's slow oracle)."""
    (player, rnd, num_actions, child_start, children, offset, _rows, terminal, term_set,
     term_payoff, deal_prob, deal_bucket, deal_pattern) = game.kernel_args()
    regrets = np.zeros(game.table_size)
    sums = np.zeros(game.table_size)
    sizes = sizes.copy()
    low, high = game.low, game.high
    for t in range(1, iterations + 1):
        current = np.zeros(game.table_size)
        for n in range(len(player)):
            if offset[n] < 0:
                continue
            k = int(num_actions[n])
            for b in range(int(game.rows[n])):
                row = slice(int(offset[n]) + b * k, int(offset[n]) + (b + 1) * k)
                pos = np.maximum(regrets[row], 0.0)
                current[row] = pos / pos.sum() if pos.sum() > 0 else 1.0 / k
        for j, r0 in enumerate(game.size_rows):
            q = (sizes[j] - low[j]) / (high[j] - low[j])
            current[r0], current[r0 + 1] = 1.0 - q, q
        weight = float(t) if plus else 1.0

        def walk(n: int, reach: np.ndarray, current: np.ndarray = current,
                 weight: float = weight) -> np.ndarray:
            t_ = terminal[n]
            if t_ >= 0:
                pattern = np.zeros(len(deal_prob), dtype=int) if term_set[t_] < 0 else (
                    deal_pattern[:, term_set[t_]])
                return term_payoff[t_, pattern, :].T.copy()
            p, k, r = int(player[n]), int(num_actions[n]), int(rnd[n])
            rows = int(offset[n]) + deal_bucket[:, p, r] * k
            value = np.zeros((4, len(deal_prob)))
            action_values = []
            for a in range(k):
                s_a = current[rows + a]
                child_reach = reach.copy()
                child_reach[p] *= s_a
                v = walk(int(children[child_start[n] + a]), child_reach)
                value += s_a * v
                action_values.append(v[p])
            cf = deal_prob * np.prod(np.delete(reach, p, axis=0), axis=0)
            for a in range(k):
                np.add.at(regrets, rows + a, cf * (action_values[a] - value[p]))
                np.add.at(sums, rows + a, weight * reach[p] * current[rows + a])
            return value

        walk(0, np.ones((4, len(deal_prob))))
        if plus:
            for n in range(len(player)):
                if offset[n] >= 0 and player[n] < 2:
                    k = int(num_actions[n])
                    block = slice(int(offset[n]), int(offset[n]) + int(game.rows[n]) * k)
                    regrets[block] = np.maximum(regrets[block], 0.0)
        for j, r0 in enumerate(game.size_rows):
            r_low, r_high = max(regrets[r0], 0.0), max(regrets[r0 + 1], 0.0)
            q = r_high / (r_low + r_high) if r_low + r_high > 0 else 0.5
            sizes[j] += (low[j] + q * (high[j] - low[j]) - sizes[j]) / min(t, smoothing)
    return sizes, regrets


@pytest.mark.parametrize("plus", [True] if NO_JIT else [True, False])  # plain: 5 s each
def test_small_learner_equals_its_slow_oracle(plus: bool) -> None:
    game = load_game("leduc.nolimit.2p.stack400.game")
    learn = LearnSpec(frozenset({0, 1}), frozenset({"", "c"}), 0.7, 1.3)
    transformed = build_sizing_game(game, parse_betting_abstraction(
        '{"fractions": [[[1.0]]], "max_raises": [2]}'), learn=learn)
    learner = SizeLearner(transformed, plus=plus, smoothing=7)
    start = learner.sizes.copy()
    iterations = 9 if NO_JIT else 25  # past the smoothing window either way; 25 is 20 s bare
    learner.iterate(iterations)
    sizes, regrets = _oracle_learn(transformed, iterations, plus, 7, start)
    assert np.allclose(learner.sizes, sizes, atol=1e-12)
    assert np.allclose(learner.regrets, regrets, atol=1e-9)


def test_checkpoint_continues_exactly(tmp_path: Path) -> None:
    straight = learner_for(0.1, 0.9)
    straight.iterate(3_000)
    straight.iterate(4_000)
    first = learner_for(0.1, 0.9)
    first.iterate(3_000)
    path = first.save_checkpoint(tmp_path / "c.npz")
    again = SizeLearner.load_checkpoint(path, first.game)
    again.iterate(4_000)
    assert np.array_equal(again.sizes, straight.sizes)
    assert np.array_equal(again.regrets, straight.regrets)
    other = learner_for(0.2, 0.9).game
    with pytest.raises(SizingError, match="another learn"):
        SizeLearner.load_checkpoint(path, other)


@pytest.mark.parametrize(
    ("learn", "range_", "message"),
    [
        (["2"], None, "POSITION 0, 1 or both"),
        (["0:cb1"], None, "bare sequence keys"),
        (["0"], "0.9,0.1", "0 < L < H"),
        (["0"], "x", "two pot fractions"),
    ],
)
def test_learn_options_are_checked(learn: list[str], range_: str | None, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_learn(learn, range_)


def test_nothing_to_learn_and_limit_games_are_errors() -> None:
    spec, rules = half_street()
    with pytest.raises(SizingError, match="with a sized bet to learn"):
        build_sizing_game(load_game(KUHN), spec, learn=parse_learn(["1"], "0.2,0.8"),
                          rules=rules)
    with pytest.raises(SizingError, match="two-player no-limit"):
        Rules.of(load_game("leduc.limit.2p.game"))
    with pytest.raises(SizingError, match="exactly two sizes"):
        build_sizing_game(load_game(KUHN), spec, learn=parse_learn(["0"], None), rules=rules)


def test_unstable_nodes_are_an_error_or_skipped() -> None:
    game = load_game("leduc.nolimit.2p.game")  # stacks 12: H reaches the stack in places
    base = parse_betting_abstraction("fcpa")
    with pytest.raises(SizingError, match="same actions"):
        build_sizing_game(game, base, learn=parse_learn(["both"], "0.75,1.33"))
    learn = parse_learn(["both"], "0.75,1.33", skip_unstable=True)
    transformed = build_sizing_game(game, base, learn=learn)
    kept = transformed.learn
    assert kept is not None and kept.skipped and kept.sequences
    assert set(kept.skipped).isdisjoint(kept.sequences)
    assert {n.key for n in transformed.learned} <= set(kept.sequences)
    for key in kept.skipped:  # each skipped node really breaks the shape with the kept ones
        trial = LearnSpec(frozenset({0, 1}), frozenset([*kept.sequences, key]), 0.75, 1.33)
        with pytest.raises(SizingError, match="same actions"):
            build_sizing_game(game, base, learn=trial)


def test_kernels_as_plain_python() -> None:
    run_without_jit(__file__)


# --------------------------------------------------------------------------- the files

LEDUC400 = "leduc.nolimit.2p.stack400.game"
LEDUC_BASE = {"name": "fcpa-l", "fractions": [[[1.0]]], "max_raises": [2]}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "strategies.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=600)


def test_learn_solve_and_play_a_learned_leduc_file(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text(json.dumps(LEDUC_BASE))
    out = _cli("learn-sizes", "--game", LEDUC400, "--abstraction", str(base),
               "--learn", "both:root,c,b", "--range", "0.5,1.5", "--iterations", "4000",
               "--out", "learned.json", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "learned sizes over time" in out.stdout and "root" in out.stdout
    document = json.loads((tmp_path / "learned.json").read_text())
    spec = parse_betting_abstraction(str(tmp_path / "learned.json"))
    assert spec == parse_betting_abstraction(document["betting"])
    assert len(document["learned"]) == 3 and all(0.5 <= x["size"] <= 1.5
                                                  for x in document["learned"])
    tree = build_tree(load_game(LEDUC400), spec)  # every key names a node
    root_sizes = [a.fraction for a in tree.nodes[0].actions if a.fraction not in (0, ALL_IN)]
    assert root_sizes == [document["learned"][0]["size"]]
    out = _cli("solve", "--game", LEDUC400, "--abstraction", "learned.json",
               "--iterations", "300", "--out", "learned.strat", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    from agent.strategy.fileformat import load_strategy, read_header

    assert read_header(tmp_path / "learned.strat")[0]["version"] == 3  # the current version
    assert load_strategy(tmp_path / "learned.strat").betting == spec
    bad = _cli("solve", "--recipe", "leduc.limit.2p", "--abstraction", "fcpa", cwd=tmp_path)
    lines = bad.stderr.strip().splitlines()  # options that do not apply: usage, status 2
    assert bad.returncode == 2 and "--abstraction goes with --game" in lines[-1]
    assert lines[0].startswith("usage: acpc-strategy solve") and len(lines) <= 8
    _play_live(tmp_path, tmp_path / "learned.strat", spec)


def _play_live(tmp_path: Path, strat: Path, spec: BettingAbstraction) -> None:
    from tests.support.dealer_harness import Dealer

    async def match() -> tuple[int, str]:
        dealer = await Dealer.start(["live", LEDUC400, "300", "5", "A", "B",
                                     "-q"], tmp_path)
        procs = []
        for port, extra in zip(dealer.ports, (["--trace", str(tmp_path / "t.jsonl")], []),
                               strict=True):
            procs.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "agent.cli", LEDUC400, "127.0.0.1",
                str(port), "--strategy", str(strat) if extra else "builtin:random",
                "--seed", "3", *extra, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=ROOT))
        rc, _, err = await dealer.wait(300)
        for p in procs:
            await asyncio.wait_for(p.communicate(), 60)
        return rc, err.decode()

    rc, err = asyncio.run(match())
    assert rc == 0, err[-2000:]
    assert "invalid" not in err.lower()
    tree = build_tree(load_game(LEDUC400), spec)
    records = [json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()]
    translations = [t for r in records for t in r.get("translations", []) if "B" in t]
    assert translations, "the random opponent's bets were never translated"
    learned_x = {round(a.x, 6) for n in tree.decision_nodes for a in n.actions}
    for t in translations:  # A and B are sizes of the node: learned ones or call/all-in
        assert t["A"] in learned_x | {0.0} and t["B"] in learned_x | {0.0}


def test_ctrl_c_writes_a_checkpoint_and_resume_continues(tmp_path: Path) -> None:
    import os
    import re
    import signal

    half = tmp_path / "half.json"
    half.write_text(HALF)
    args = [sys.executable, "-m", "strategies.cli", "learn-sizes", "--game", KUHN,
            "--abstraction", str(half), "--learn", "0", "--range", "0.1,0.9", "--min-bet", "0",
            "--out", str(tmp_path / "l.json"), "--checkpoint", str(tmp_path / "l.ckpt.npz")]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen([*args, "--minutes", "30", "--quiet"], cwd=ROOT, text=True,
                          stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env) as proc:
        assert proc.stderr is not None
        for _ in range(20):
            line = proc.stderr.readline()
            if "learning sizes from iteration" in line or not line:
                break
        assert "Ctrl-C writes a checkpoint" in line, line
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "--resume" in err
    stopped = int(re.search(r"interrupted at iteration (\d+)", err).group(1))  # type: ignore[union-attr]
    assert (tmp_path / "l.ckpt.npz").exists() and not (tmp_path / "l.json").exists()
    done = subprocess.run([*args, "--resume", "--iterations", str(stopped + 1000),
                           "--quiet"], cwd=ROOT, text=True, capture_output=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"from iteration {stopped}" in done.stderr
    document = json.loads((tmp_path / "l.json").read_text())
    assert document["run"]["iterations"] == stopped + 1000


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    for extra, message in (
        (["--learn", "7"], "POSITION 0, 1 or both"),
        (["--learn", "0", "--range", "1,0.5"], "0 < L < H"),
        (["--learn", "0", "--range", "0.1,0.9", "--plot", "x.txt"], "--plot FILE.png"),
        (["--learn", "1", "--range", "0.1,0.9"], "with a sized bet to learn"),
    ):
        out = _cli("learn-sizes", "--game", KUHN, "--abstraction", HALF, *extra, "--out",
                   "o.json", cwd=tmp_path)
        assert out.returncode == 1, out.stderr
        assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_the_tree_cap_is_checked_before_the_sizing_game_is_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # learn-sizes built its own tree up to 2,000,000 nodes before any check; now the chip
    # tree is counted first, under the same cap as every other tree
    spec = parse_betting_abstraction('{"fractions": [[[0.5, 1.0]]], "max_raises": [2]}')
    game = load_game("leduc.nolimit.2p.game")
    monkeypatch.setenv(TREE_NODES_ENV, "50")
    with pytest.raises(AbstractionError, match="at most 50 nodes"):
        build_sizing_game(game, spec)
    monkeypatch.delenv(TREE_NODES_ENV)
    assert build_sizing_game(game, spec).nodes
