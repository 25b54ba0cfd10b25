from __future__ import annotations

import itertools

import numpy as np

from agent.acpc.cards import deck_for, format_card, format_cards, parse_card, parse_cards
from agent.acpc.dealing import MT19937, deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from tests.support import LOGS


def test_mt19937_check_value_and_numpy_stream() -> None:
    assert MT19937(5489).next_u32() == 3499211612
    for seed in (0, 1, 42, 2**32 - 1):
        ours = MT19937(seed)
        ref = np.random.RandomState(seed)
        # RandomState's legacy raw stream is genrand_int32 seeded with init_genrand.
        raw = ref.randint(0, 2**32, size=1500, dtype=np.uint64)
        assert [ours.next_u32() for _ in range(1500)] == [int(v) for v in raw]


def test_cards_text_round_trip() -> None:
    assert parse_card("Ah") == 12 * 4 + 2
    assert format_card(0) == "2c"
    assert parse_cards("7d3d") == (5 * 4 + 1, 1 * 4 + 1)
    for c in range(52):
        assert parse_card(format_card(c)) == c
    assert format_cards(parse_cards("QsJh2c")) == "QsJh2c"


def test_small_decks_use_highest_ranks_and_last_suits(kuhn3: Game, leduc: Game) -> None:
    assert format_cards(deck_for(kuhn3)) == "JsQsKsAs"
    assert format_cards(deck_for(leduc)) == "QhKhAhQsKsAs"
    assert len(deck_for(load_game("holdem.nolimit.2p.reverse_blinds.game"))) == 52


def test_seed_42_first_hand(nl2: Game) -> None:
    deal = next(deal_hands(nl2, 42))
    assert "|".join(format_cards(h) for h in deal.hole) == "7d3d|2hAc"
    assert format_cards(deal.board) == "5sKs7s9s6h"


def _log_cards(path: str) -> list[str]:
    return [line.split(":")[3] for line in (LOGS / path).read_text().splitlines()
            if line.startswith("STATE:")]


def _cards_by_name(path: str) -> list[dict[str, str]]:
    out = []
    for line in (LOGS / path).read_text().splitlines():
        if line.startswith("STATE:"):
            parts = line.split(":")
            holes = parts[3].split("/")[0].split("|")
            out.append(dict(zip(parts[5].split("|"), holes, strict=True)))
    return out


def test_deals_match_every_reference_log_hole_cards(nl2: Game) -> None:
    # Hole cards are printed for everyone in the log; the board only up to the hand's last
    # round, so compare the printed prefix.
    for seed, log in ((42, "nl1000.log"), (77, "dupA.log")):
        for deal, cards in zip(deal_hands(nl2, seed), _log_cards(log), strict=False):
            holes, _, board = cards.partition("/")
            assert holes == "|".join(format_cards(h) for h in deal.hole)
            assert format_cards(deal.board).startswith(board.replace("/", ""))


def test_duplicate_halves_swap_cards() -> None:
    a = _cards_by_name("dupA.log")
    b = _cards_by_name("dupB.log")
    assert len(a) == len(b) == 1000
    for hand, (ha, hb) in enumerate(zip(a, b, strict=True)):
        assert ha["Alice"] == hb["Bob"] and ha["Bob"] == hb["Alice"], hand
        assert ha["Alice"] != ha["Bob"]


def test_fixed_number_of_draws_per_hand(leduc: Game) -> None:
    # Two matches with the same seed agree hand for hand however far apart we look.
    first = list(itertools.islice(deal_hands(leduc, 7), 50))
    again = list(itertools.islice(deal_hands(leduc, 7), 50))
    assert first == again
    for d in first:
        cards = [c for h in d.hole for c in h] + list(d.board)
        assert len(set(cards)) == len(cards) == leduc.cards_per_hand
