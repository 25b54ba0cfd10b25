"""Exact best responses and head-to-head values by boards
(:mod:`strategies.measure.translation.royal_br`).

* No-limit Leduc: every best response equals the translation lab's
  (:class:`strategies.measure.translation.full_br.AgentLab`, enumerated deals) on the bundled files,
  for several mappings, both purifications and both size conventions.
* A reduced Royal (8 cards: ranks A and K in four suits, 2 hole cards, a flop of 3, blinds
  1/2 reversed, stacks 4): with random abstract tables, the best response in both seats
  equals (a) the lab's, (b) a pure-Python brute force over explicit deals that picks, at
  every information set of the responder, the action with the best summed value (the best
  pure strategy, as the game has perfect recall), with the boards grouped by suit
  isomorphism and walked one by one.
* An agent whose betting abstraction is the real game (every legal size) has a real-game
  best response equal to its abstract-game one and to the project's best response.
* The head-to-head value of two translating agents equals the enumerated value of their
  induced real-game behaviours, both seats; an agent against itself sums to zero over seats.
* The tables script on two small strategy files: cells equal direct measurements, the
  round robin is antisymmetric with a zero diagonal, PNGs and markdown are written;
  ``--resume`` reuses the cells of an earlier run on the same files.
* Bad input: one-line errors.
"""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS, build_tree, parse_betting_abstraction
from agent.abstraction.buckets import LosslessCards
from agent.abstraction.translation import get_mapping
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game, parse_gamedef
from agent.acpc.gamefiles import load_game
from agent.data import strategy_path
from agent.strategy.fileformat import load_strategy, table_layout
from agent.strategy.purification import parse_purification
from strategies.games.abstract import AbstractGame, build_abstract_game
from strategies.measure.best_response import best_response, expected_values
from strategies.measure.translation import royal_br as rb
from strategies.measure.translation.full_br import (
    AgentLab,
    build_agent_model,
    build_full_game,
    build_full_tree,
    induced_table,
)

NONE = parse_purification("none")
FULL = parse_purification("full")
MAPPINGS = ("rand-pshar", "det-arith", "rand-geo-2", "det-geo")

SMALL_ROYAL = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 2
stack = 4 4
blind = 2 1
firstPlayer = 2 1
numSuits = 4
numRanks = 2
numHoleCards = 2
numBoardCards = 0 3
END GAMEDEF
"""


def small_royal() -> Game:
    return parse_gamedef(SMALL_ROYAL, "small-royal")


def random_agent(game: Game, betting: str, seed: int,
                 purification: str = "none") -> tuple[rb.TranslatedAgent, np.ndarray]:
    abstraction = PRESETS[betting] if betting in PRESETS else parse_betting_abstraction(betting)
    tree = build_tree(game, abstraction)
    cards = LosslessCards(game)
    layout = table_layout(tree, cards.buckets)
    table = np.random.default_rng(seed).random(layout.total) ** 3
    agent = rb.table_agent(tree, cards, table, parse_purification(purification))
    return agent, agent.table


def lab_best_responses(agent: rb.TranslatedAgent, mapping: str,
                       sizes_in: str = "abstract") -> tuple[float, float]:
    real = build_full_game(agent.game)
    ag = build_abstract_game(agent.game, agent.tree.abstraction, agent.cards, tree=agent.tree)
    brs = []
    for responder in (0, 1):
        model = build_agent_model(real, ag, 1 - responder, sizes_in)
        table = induced_table(model, agent.table, get_mapping(mapping))
        brs.append(best_response(real, table, responder).value)
    return brs[0], brs[1]


def brute_force(agent: rb.TranslatedAgent, mapping: str, responder: int) -> float:
    """Best pure strategy of ``responder``: explicit deals, argmax per information set."""
    game = agent.game
    real = build_full_game(game)
    ag = build_abstract_game(game, agent.tree.abstraction, agent.cards, tree=agent.tree)
    model = build_agent_model(real, ag, 1 - responder)
    behaviour = induced_table(model, agent.table, get_mapping(mapping))
    nodes = real.tree.nodes
    deals = range(real.num_deals)
    # the agent's reach of every node per deal (its own actions only)
    reach = np.zeros((len(nodes), real.num_deals))
    reach[0] = 1.0
    for node in nodes:
        if node.is_terminal:
            continue
        k = len(node.children)
        for i, c in enumerate(node.children):
            for d in deals:
                if node.player == responder:
                    reach[c, d] = reach[node.id, d]
                else:
                    b = real.deal_bucket[d, 1 - responder, node.round]
                    reach[c, d] = reach[node.id, d] * behaviour[
                        real.offset[node.id] + b * k + i]
    hole = game.num_hole_cards
    value = np.zeros((len(nodes), real.num_deals))  # weighted by the agent's reach
    for node in reversed(nodes):
        n = node.id
        if node.is_terminal:
            t = real.terminal[n]
            for d in deals:
                s = real.term_set[t]
                pattern = 0 if s < 0 else real.deal_pattern[d, s]
                value[n, d] = reach[n, d] * real.term_payoff[t, pattern, responder]
            continue
        if node.player != responder:
            for c in node.children:
                value[n] += value[c]
            continue
        groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for d in deals:
            cards = real.deal_cards[d]
            seen = tuple(cards[responder * hole : (responder + 1) * hole])
            if node.round > 0:
                seen += tuple(cards[2 * hole :])
            groups[seen].append(d)
        for members in groups.values():
            sums = [sum(value[c, d] for d in members) for c in node.children]
            best = node.children[int(np.argmax(sums))]
            for d in members:
                value[n, d] = value[best, d]
    return float(value[0] @ real.deal_prob)


@pytest.mark.parametrize("name", ["fcpa", "fchpa"])
def test_leduc_equals_lab(name: str) -> None:
    strategy = load_strategy(strategy_path(f"leduc.nolimit.2p.{name}.strat"))
    lab = AgentLab(strategy)
    for purification in (NONE, FULL):
        royal = rb.RoyalLab(rb.translated_agent(strategy, purification))
        for sizes_in in ("abstract", "real"):
            for mapping in MAPPINGS:
                want = lab.measure(get_mapping(mapping), purification,
                                   sizes_in=sizes_in).best_responses
                got = royal.measure(get_mapping(mapping), sizes_in).best_responses
                assert got == pytest.approx(want, abs=1e-12), (purification, sizes_in, mapping)


@pytest.mark.parametrize(("betting", "purification", "seed"),
                         [("fcpa", "none", 1), ("fchpa", "full", 2), ("fc2pa", "none", 3)])
def test_small_royal_equals_lab(betting: str, purification: str, seed: int) -> None:
    agent, _ = random_agent(small_royal(), betting, seed, purification)
    lab = rb.RoyalLab(agent)
    for mapping in MAPPINGS:
        want = lab_best_responses(agent, mapping)
        got = lab.measure(get_mapping(mapping)).best_responses
        assert got == pytest.approx(want, abs=1e-12)
        models = lab.models()
        walked = (rb.best_response_value(models[1], get_mapping(mapping), isomorphic=False),
                  rb.best_response_value(models[0], get_mapping(mapping), isomorphic=False))
        assert walked == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("mapping", ["rand-pshar", "det-psHar"])
def test_small_royal_equals_brute_force(mapping: str) -> None:
    agent, _ = random_agent(small_royal(), "fchpa", 7)
    got = rb.RoyalLab(agent).measure(get_mapping(mapping.lower())).best_responses
    want = tuple(brute_force(agent, mapping.lower(), r) for r in (0, 1))
    assert got == pytest.approx(want, abs=1e-12)
    assert got[0] + got[1] > 0  # a random agent is exploitable


def test_every_size_agent_is_measured_as_its_abstract_game() -> None:
    game = small_royal()
    tree = build_full_tree(game)
    cards = LosslessCards(game)
    layout = table_layout(tree, cards.buckets)
    table = np.random.default_rng(5).random(layout.total)
    agent = rb.table_agent(tree, cards, table)
    lab = rb.RoyalLab(agent)
    abstract = lab.abstract().best_responses
    real = build_full_game(game)
    want = tuple(best_response(real, agent.table, r).value for r in (0, 1))
    assert abstract == pytest.approx(want, abs=1e-12)
    for mapping in ("rand-pshar", "det-arith"):
        assert lab.measure(get_mapping(mapping)).best_responses == pytest.approx(
            want, abs=1e-12)


def induced(agent: rb.TranslatedAgent, seat: int, mapping: str) -> tuple[AbstractGame,
                                                                          np.ndarray]:
    real = build_full_game(agent.game)
    ag = build_abstract_game(agent.game, agent.tree.abstraction, agent.cards, tree=agent.tree)
    return real, induced_table(build_agent_model(real, ag, seat), agent.table,
                               get_mapping(mapping))


def test_head_to_head_equals_enumeration() -> None:
    game = small_royal()
    a, _ = random_agent(game, "fcpa", 11)
    b, _ = random_agent(game, "fchpa", 12, "full")
    for seat_a in (0, 1):
        ma, mb = rb.seat_model(a, seat_a), rb.seat_model(b, 1 - seat_a)
        got = rb.head_to_head(ma, mb, get_mapping("rand-pshar"), get_mapping("det-arith"))
        real, ta = induced(a, seat_a, "rand-pshar")
        _, tb = induced(b, 1 - seat_a, "det-arith")
        combined = ta.copy()
        for node in real.tree.nodes:
            if not node.is_terminal and node.player == 1 - seat_a:
                start = int(real.offset[node.id])
                size = int(real.rows[node.id]) * len(node.children)
                combined[start : start + size] = tb[start : start + size]
        want = expected_values(real, combined)[1 - seat_a]
        assert got == pytest.approx(want, abs=1e-12)
        walked = rb.head_to_head(ma, mb, get_mapping("rand-pshar"), get_mapping("det-arith"),
                                 isomorphic=False)
        assert walked == pytest.approx(want, abs=1e-12)
    # the same agent in both seats: the two seats' values cancel
    m0, m1 = rb.seat_model(a, 0), rb.seat_model(a, 1)
    pshar = get_mapping("rand-pshar")
    assert rb.head_to_head(m0, m1, pshar, pshar) + rb.head_to_head(
        m1, m0, pshar, pshar) == pytest.approx(0.0, abs=1e-12)


def test_bad_input() -> None:
    agent, _ = random_agent(small_royal(), "fcpa", 1)
    with pytest.raises(UsageError, match="seat 0 or 1"):
        rb.seat_model(agent, 2)
    m0 = rb.seat_model(agent, 0)
    with pytest.raises(UsageError, match="different seats"):
        rb.head_to_head(m0, m0, get_mapping("rand-pshar"), get_mapping("rand-pshar"))
    one_round = SMALL_ROYAL.replace("numRounds = 2", "numRounds = 1").replace(
        "numBoardCards = 0 3", "numBoardCards = 0").replace("firstPlayer = 2 1", "firstPlayer = 2")
    with pytest.raises(UsageError, match="two rounds"):
        rb.check_game(parse_gamedef(one_round, "one-round"))
    with pytest.raises(UsageError, match="two-player no-limit"):
        rb.check_game(load_game("leduc.limit.2p.game"))
    with pytest.raises(UsageError, match="values"):
        rb.table_agent(agent.tree, agent.cards, np.ones(3))


def test_tables_script(tmp_path: Path) -> None:
    from agent.strategy.fileformat import dump_strategy
    from strategies.solvers.cfr import Solver
    from strategies.solvers.royal import RoyalGame

    game = small_royal()
    files = []
    for name in ("fcpa", "fchpa"):
        royal = RoyalGame(game, PRESETS[name])
        solver = Solver(royal, "cfr+")
        solver.iterate(10)
        path = dump_strategy(tmp_path / f"{name}.strat", game, PRESETS[name],
                             royal.cards.spec, solver.average_strategy(), tree=royal.tree)
        files.append(f"{name}={path}")
    spec = importlib.util.spec_from_file_location(
        "royal_tables_script", Path(__file__).parents[3] / "scripts" / "royal_tables.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "out"
    args = ["--out", str(out), "--quiet", "--mappings", "rand-pshar,det-arith"]
    assert script.main([*args, "--strategy", files[0], "--strategy", files[1]]) == 0
    data = json.loads((out / "royal_tables.json").read_text())
    assert data["complete"] and data["names"] == ["fcpa", "fchpa"]
    assert len(data["exploitability"]) == 2 * 2 * 2
    cell = data["exploitability"][0]
    strategy = load_strategy(tmp_path / "fcpa.strat")
    want = rb.RoyalLab(rb.translated_agent(strategy, NONE)).measure(
        get_mapping("rand-pshar")).best_responses
    assert (cell["abstraction"], cell["purification"], cell["mapping"]) == (
        "fcpa", "none", "rand-pshar")
    assert cell["best_responses"] == pytest.approx(want, abs=1e-12)
    rr = {(r["row"], r["column"]): r["value"] for r in data["round_robin"]}
    assert rr[("fcpa", "fcpa")] == pytest.approx(0.0, abs=1e-12)
    assert rr[("fcpa", "fchpa")] == pytest.approx(-rr[("fchpa", "fcpa")], abs=1e-12)
    assert (out / "royal_exploitability.png").stat().st_size > 1000
    assert (out / "royal_round_robin.png").stat().st_size > 1000
    assert "| fcpa | none |" in (out / "royal_tables.md").read_text()
    # --resume reuses every cell measured on the same files
    (out / "royal_tables.json").write_text(json.dumps(
        {**data, "exploitability": [{**r, "average": 123.0} for r in data["exploitability"]]}))
    assert script.main([*args, "--resume", "--strategy", files[0], "--strategy", files[1]]) == 0
    again = json.loads((out / "royal_tables.json").read_text())
    assert [r["average"] for r in again["exploitability"]] == [123.0] * 8
    assert again["round_robin"] == data["round_robin"]
    assert script.main([*args, "--strategy", "nofile"]) == 1
