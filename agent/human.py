"""A person at the table: ``acpc-agent GAME HOST PORT --human``.

:class:`HumanPlayer` is a policy that asks a terminal. It is told every MATCHSTATE the dealer
sends (:meth:`HumanPlayer.observe`, through :func:`agent.client.play`'s observer) and prints
what happened since the last one: a new hand with the player's hole cards, each action by
position (``you``, ``P0``, ...), a new round with its board cards, and at the end of a hand
the cards shown and the chips won. When it is the player's turn (:meth:`HumanPlayer.act`) it
prints the board, the pot, every player's chips in and left, what there is to call and the
legal actions, then reads one line:

* ``f`` / ``fold``; ``c`` / ``call`` / ``k`` / ``check``;
* no-limit: ``r N`` / ``rN`` / ``raise N`` (raise *to* N chips in total for the hand, the
  wire's ``rN``), ``min``, ``half`` (half the pot after calling), ``pot`` (the pot after
  calling), ``allin``; a size outside the legal bounds is refused, ``half`` and ``pot`` are
  clamped to them;
* limit: ``r`` / ``raise`` (the fixed size);
* ``?`` / ``help`` shows the choices again; ``q`` / ``quit`` (or end of input) leaves the match
  (:class:`PlayerLeft`).

Anything else, or an action that is not legal here (fold with nothing to call, a raise when
none is allowed), is answered with one line saying why and the prompt again: an illegal action
is never sent. Input is read with a plain blocking ``readline``: the client has one connection
and nothing else to do while a person thinks (give the dealer long time limits, e.g.
``--t_per_hand 600000``).

Imports the stdlib and :mod:`agent.acpc` only.
"""

from __future__ import annotations

from typing import TextIO

from agent.acpc.betsize import pot_after_call, raise_to_from_pot_fraction, round_raise_to
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.describe import cards_text, describe_action, round_name
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import INT32_MAX, Game
from agent.acpc.matchstate import MatchState

PROMPT = "> "
MAX_PROMPTS = 10_000
"""Bad lines answered before the player is taken to have left (a bound on the prompt loop)."""


class PlayerLeft(AcpcError):
    """The person typed ``quit`` or closed the input."""


class HumanPlayer:
    """Plays the seat from a terminal: ``observe`` every state, ``act`` when to act."""

    def __init__(self, game: Game, inp: TextIO, out: TextIO, *, opponent: str | None = None
                 ) -> None:
        self.game = game
        self.inp = inp
        self.out = out
        self.opponent = opponent
        self._hand = -1
        self._seen = 0
        self._round = 0
        self._shown_final = False
        self.hands = 0
        self.total = 0.0

    # ------------------------------------------------------------------------- output

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _who(self, ms: MatchState, p: int) -> str:
        return "you" if p == ms.position else f"P{p}"

    def _replay(self, ms: MatchState) -> list[tuple[BettingState, Action, int]]:
        """Every action of the hand so far with the state before it (replayed from the
        start: a hand has few actions)."""
        state = BettingState.initial(self.game)
        out = []
        for r, acts in enumerate(ms.state.actions):
            for action in acts:
                out.append((state, action, r))
                state = state.apply(action)
        return out

    def observe(self, ms: MatchState) -> None:
        """Print what is new in ``ms`` since the last state of this hand."""
        game = self.game
        if ms.hand_number != self._hand:
            self._hand = ms.hand_number
            self._seen = 0
            self._round = 0
            self._shown_final = False
            seats = ", ".join(
                f"{self._who(ms, p)} {game.blind[p]}" for p in range(game.num_players)
                if game.blind[p])
            self._say("")
            self._say(f"=== hand {ms.hand_number + 1}: you are P{ms.position} of "
                      f"{game.num_players}"
                      + (f" (opponent: {self.opponent})" if self.opponent else "") + " ===")
            self._say(f"blinds: {seats or 'none'}")
            self._say(f"your cards: {cards_text(ms.own_cards)}")
            if game.num_board_cards[0]:
                self._say(f"board: {cards_text(ms.board[: game.board_cards_through(0)])}")
        history = self._replay(ms)
        for before, action, r in history[self._seen:]:
            self._announce_round(ms, r)
            self._say(f"  {self._who(ms, before.player)}: {describe_action(before, action)}")
        self._seen = len(history)
        if ms.state.finished:
            if not self._shown_final:
                self._finish(ms)
        else:
            self._announce_round(ms, ms.state.round)

    def _announce_round(self, ms: MatchState, r: int) -> None:
        while self._round < r:
            self._round += 1
            game = self.game
            new = ms.board[game.board_start(self._round): game.board_cards_through(self._round)]
            board = ms.board[: game.board_cards_through(self._round)]
            line = f"--- {round_name(game, self._round)}"
            if new:
                line += f": {cards_text(new)} (board {cards_text(board)})"
            self._say(line + " ---")

    def _finish(self, ms: MatchState) -> None:
        from agent.client import final_value

        self._shown_final = True
        state = ms.state
        self._announce_round(ms, state.round)
        if state.is_showdown:
            self._say(f"showdown, board {cards_text(ms.board)}:")
            for p, hole in enumerate(ms.hole_cards):
                if not state.folded[p]:
                    self._say(f"  {self._who(ms, p)}: {cards_text(hole)}")
        won = final_value(ms)
        self.hands += 1
        self.total += won
        self._say(f"result: you {'won' if won >= 0 else 'lost'} {abs(won):g} "
                  f"(pot {state.pot}); match {self.total:+g} after {self.hands} "
                  f"hand{'s' if self.hands != 1 else ''}")

    def status(self, ms: MatchState) -> str:
        """Board, pot, and each player's chips in the pot and left."""
        game = self.game
        state = ms.state
        parts = []
        for p in range(game.num_players):
            left = game.stack[p] - state.spent[p]
            mark = " folded" if state.folded[p] else ""
            stack = "" if game.stack[p] == INT32_MAX else f", {left} left"
            parts.append(f"{self._who(ms, p)} in {state.spent[p]}{stack}{mark}")
        board = ms.board[: game.board_cards_through(state.round)]
        text = f"your cards {cards_text(ms.own_cards)}"
        if game.total_board_cards:
            text += f" | board {cards_text(board)}"
        return f"{text} | pot {state.pot} | " + "; ".join(parts)

    def choices(self, state: BettingState) -> str:
        """The legal actions, as the words to type."""
        items = []
        owe = state.to_call()
        if state.can_fold():
            items.append("f = fold")
        items.append(f"c = call {owe}" if owe else "c = check")
        bounds = state.raise_bounds()
        if bounds is not None:
            lo, hi = bounds
            if not self.game.is_nolimit:
                items.append(f"r = raise to {lo}")
            else:
                items.append(f"r N = raise to N ({lo}..{hi})")
                items.append(f"min = r {lo}")
                items.append(f"half = r {self._fraction(state, 0.5)}")
                items.append(f"pot = r {self._fraction(state, 1.0)}")
                items.append(f"allin = r {hi}")
        return ", ".join(items)

    @staticmethod
    def _fraction(state: BettingState, x: float) -> int:
        bounds = state.raise_bounds()
        assert bounds is not None
        to = round_raise_to(raise_to_from_pot_fraction(state, x))
        return min(max(to, bounds[0]), bounds[1])

    # ------------------------------------------------------------------------- input

    def parse(self, text: str, state: BettingState) -> Action | str:
        """The action a typed line asks for, or the one-line reason it cannot be played."""
        words = text.strip().lower().split()
        if not words:
            return "type an action (? for help)"
        head, rest = words[0], words[1:]
        if head in ("q", "quit", "exit"):
            raise PlayerLeft(f"you left the match (typed {text.strip()!r})")
        if head in ("?", "h", "help"):
            return f"choices: {self.choices(state)}"
        amount: str | None = None
        if head[0] == "r" and head[1:].isdigit():
            head, amount = "r", head[1:]
        if head in ("f", "fold"):
            if rest:
                return f"expected just 'f', got {text.strip()!r}"
            if not state.can_fold():
                return "nothing to call: you cannot fold here (c to check)"
            return FOLD
        if head in ("c", "call", "k", "check"):
            if rest:
                return f"expected just 'c', got {text.strip()!r}"
            return CALL
        if head not in ("r", "raise", "b", "bet", "min", "half", "pot", "allin", "all-in",
                        "max"):
            return f"expected f, c, r N, min, half, pot, allin or ?, got {text.strip()!r}"
        bounds = state.raise_bounds()
        if bounds is None:
            return f"no raise is allowed here ({self.choices(state)})"
        lo, hi = bounds
        if not self.game.is_nolimit:
            if rest or amount is not None or head not in ("r", "raise", "b", "bet"):
                return f"limit game: type r to raise to {lo} (sizes are fixed)"
            return LIMIT_RAISE
        if head in ("min", "half", "pot", "allin", "all-in", "max"):
            if rest:
                return f"expected just {head!r}, got {text.strip()!r}"
            to = {"min": lo, "allin": hi, "all-in": hi, "max": hi}.get(head)
            if to is None:
                to = self._fraction(state, 0.5 if head == "half" else 1.0)
            return Action(ActionKind.RAISE, to)
        if amount is None:
            if len(rest) != 1:
                return f"expected r N with N the total to raise to ({lo}..{hi}), got " \
                       f"{text.strip()!r}"
            amount = rest[0]
        elif rest:
            return f"expected r N, got {text.strip()!r}"
        if not amount.isdigit():
            return f"expected a whole number of chips after r, got {amount!r}"
        to = int(amount)
        if not lo <= to <= hi:
            return (f"expected a raise to {lo}..{hi} (chips in total for the hand; "
                    f"pot after calling is {pot_after_call(state)}), got {to}")
        return Action(ActionKind.RAISE, to)

    def act(self, ms: MatchState) -> Action:
        """Show the state and the choices, read lines until one is a legal action.

        Raises:
            PlayerLeft: on ``quit`` or the end of the input.
        """
        state = ms.state
        self._say(self.status(ms))
        self._say(f"your turn: {self.choices(state)}")
        for _ in range(MAX_PROMPTS):
            self.out.write(PROMPT)
            self.out.flush()
            line = self.inp.readline()
            if not line:
                raise PlayerLeft("you left the match (end of the input)")
            got = self.parse(line, state)
            if isinstance(got, Action):
                state.check_action(got)  # parse only builds legal actions; never send one
                return got
            self._say(got)
        raise PlayerLeft(f"you left the match ({MAX_PROMPTS} lines that were not an action)")
