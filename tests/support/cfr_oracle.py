"""The game as the slow pure-Python solver oracles see it (tests of strategies.solvers.cfr and
strategies.measure.best_response): the canonical tree, every deal with its probability, buckets and
payoffs computed directly, not from the flat arrays the kernels walk."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from agent.abstraction.actions import PRESETS, BettingTree, build_tree
from agent.abstraction.buckets import LosslessCards
from agent.acpc.cards import deck_for
from agent.acpc.evaluator import rank_hand_fast
from agent.acpc.gamedef import Game, parse_gamedef
from agent.acpc.gamefiles import load_game
from agent.strategy.fileformat import TableLayout, table_layout
from strategies.games.abstract import AbstractGame, build_abstract_game
from tests.support import DATA


def kuhn2() -> Game:
    return parse_gamedef((DATA / "kuhn.limit.2p.game").read_text(), "kuhn.limit.2p.game")


_GAMES: dict[str, AbstractGame] = {}


def abstract(name: str, betting: str = "fcpa") -> AbstractGame:
    """Built once per test session: ``kuhn2``, a bundled game file name."""
    key = f"{name}/{betting}"
    if key not in _GAMES:
        game = kuhn2() if name == "kuhn2" else load_game(name)
        _GAMES[key] = build_abstract_game(game, PRESETS[betting], LosslessCards(game))
    return _GAMES[key]


# --------------------------------------------------------------------------- the oracle


@dataclass
class Oracle:
    """The game as the oracles see it: the tree, the deals, buckets and payoffs directly."""

    game: Game
    tree: BettingTree
    cards: LosslessCards
    layout: TableLayout
    deals: list[tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]]
    probs: list[float]
    _payoff: dict[tuple[int, int], tuple[float, ...]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.game.num_players

    def bucket(self, deal: int, position: int, round_: int) -> int:
        holes, board = self.deals[deal]
        visible = board[: self.game.board_cards_through(round_)]
        return self.cards.bucket(round_, holes[position], visible)

    def row(self, node: int, deal: int) -> int:
        """First table index of the row the acting player uses at ``node`` in ``deal``."""
        nd = self.tree.nodes[node]
        k = len(nd.actions)
        return int(self.layout.offsets[node]) + self.bucket(deal, nd.player, nd.round) * k

    def payoff(self, node: int, deal: int) -> tuple[float, ...]:
        key = (node, deal)
        if key not in self._payoff:
            state = self.tree.nodes[node].state
            holes, board = self.deals[deal]
            if state.is_showdown:
                ranks = [rank_hand_fast(list(h) + list(board)) for h in holes]
                self._payoff[key] = state.payoffs(ranks)
            else:
                self._payoff[key] = state.payoffs()
        return self._payoff[key]

    def player_rows(self, player: int | None) -> Iterator[int]:
        """Table indices of every row value of ``player`` (every player if None)."""
        for nd in self.tree.decision_nodes:
            if player is None or nd.player == player:
                start = int(self.layout.offsets[nd.id])
                yield from range(start, start + int(self.layout.rows[nd.id]) * len(nd.actions))


def make_oracle(game: Game, betting: str = "fcpa") -> Oracle:
    tree = build_tree(game, PRESETS[betting])
    cards = LosslessCards(game)
    deck = deck_for(game)
    h = game.num_hole_cards
    deals: list[tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]] = []

    def rec(left: tuple[int, ...], holes: tuple[tuple[int, ...], ...]) -> None:
        if len(holes) < game.num_players:
            for hole in itertools.combinations(left, h):
                rec(tuple(c for c in left if c not in hole), (*holes, hole))
            return
        boards: list[tuple[int, ...]] = [()]
        for r in range(game.num_rounds):
            boards = [b + extra for b in boards
                      for extra in itertools.combinations([c for c in left if c not in b],
                                                          game.num_board_cards[r])]
        deals.extend((holes, b) for b in boards)

    rec(tuple(deck), ())
    probs = [1.0 / len(deals)] * len(deals)
    return Oracle(game, tree, cards, table_layout(tree, cards.buckets), deals, probs)
