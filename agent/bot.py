"""Your own bot in Python: implement one method, play it anywhere.

A bot is any object with one method, ``act(state) -> Action`` (:class:`Bot`): ``state`` is
the :class:`MatchState` the dealer sent (your ``position``, the ``hand_number``, the
:class:`BettingState` as ``state.state``, your cards ``state.own_cards``, the ``board``),
always one where you are to act; the answer is :data:`FOLD`, :data:`CALL` (check or call) or
a raise (:func:`raise_to`, :func:`pot_raise`; :data:`LIMIT_RAISE` in limit games). The
helpers read the state the way the project's own agents do: :func:`legal_actions`,
:func:`raise_bounds`, :func:`to_call`, :func:`visible_board`, :func:`rank_of` and
:func:`suit_of` (a card is ``rank * 4 + suit``, rank 0 the deuce), :func:`cards_text`.

Play it:

* ``acpc-agent GAME HOST PORT --strategy mybot:MyBot`` against any ACPC dealer, in
  ``acpc-match`` variants (``-v me=mybot:MyBot``, or ``strategy = "mybot:MyBot"`` in a
  ``--variants`` file) and in its ``--estimator`` runs (:func:`agent.agents.load_bot`: the
  class is made with the keywords it accepts among ``game`` and ``seed``);
* from Python, ``await play(bot, host, port, game)`` (:func:`play`), which returns the
  match's :class:`Summary`.

Every answer is checked: a bot that raises, or returns anything but a legal
:class:`Action`, stops with one line naming it (:class:`BotError`). The estimators of
``acpc-match`` ask a bot the way they ask the deterministic built-ins: once per state they
visit, not in a match's order, so a bot for them decides from the state alone.

The other way round, :class:`ExternalAgent` (:mod:`agent.external`) drives any ACPC agent
process from Python: ``async with ExternalAgent.popen([cmd, ...], game) as ag: action =
await ag.act(state)``.

Imports the stdlib and :mod:`agent` modules that load without numpy or numba, so a bot
starts fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.cards import rank_of, suit_of
from agent.acpc.describe import cards_text, describe_action
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState, parse_matchstate
from agent.agents import BotError, BotPolicy, BotSpecError, load_bot
from agent.builtin import Policy as Bot
from agent.client import Summary
from agent.client import play as play_policy
from agent.decision import realise
from agent.external import ExternalAgent, ExternalAgentError, ExternalStats

__all__ = [
    "CALL",
    "FOLD",
    "LIMIT_RAISE",
    "Action",
    "ActionKind",
    "BettingState",
    "Bot",
    "BotError",
    "BotSpecError",
    "ExternalAgent",
    "ExternalAgentError",
    "ExternalStats",
    "Game",
    "MatchState",
    "Summary",
    "cards_text",
    "describe_action",
    "legal_actions",
    "load_bot",
    "load_game",
    "parse_matchstate",
    "play",
    "pot_raise",
    "raise_bounds",
    "raise_to",
    "rank_of",
    "suit_of",
    "to_call",
    "visible_board",
]


def legal_actions(ms: MatchState) -> tuple[ActionKind, ...]:
    """The kinds of action you may take, in the order fold, call, raise (fold only when
    facing a bet; raise only while one is legal: :func:`raise_bounds`)."""
    return ms.state.legal_actions()


def raise_bounds(ms: MatchState) -> tuple[int, int] | None:
    """``(smallest, largest)`` legal raise-to totals (chips for the whole hand, as on the
    wire), or ``None`` when you may not raise. Limit games: the one fixed size."""
    return ms.state.raise_bounds()


def to_call(ms: MatchState) -> int:
    """Chips you must add to call (0: you may check)."""
    return ms.state.to_call()


def visible_board(ms: MatchState) -> tuple[int, ...]:
    """The board cards dealt so far in this hand."""
    return ms.board[: ms.game.board_cards_through(ms.state.round)]


def raise_to(ms: MatchState, chips: int) -> Action:
    """A raise to ``chips`` (a hand total) moved into the legal bounds; the fixed raise in a
    limit game; a call when no raise is legal."""
    bounds = ms.state.raise_bounds()
    if bounds is None:
        return CALL
    if not ms.game.is_nolimit:
        return LIMIT_RAISE
    return Action(ActionKind.RAISE, min(max(int(chips), bounds[0]), bounds[1]))


def pot_raise(ms: MatchState, fraction: float = 1.0) -> Action:
    """A raise of ``fraction`` of the pot (1: pot-sized), realised as the project's agents
    realise their own raises (:func:`agent.decision.realise`: whole chips, clamped to the
    legal bounds; a call when no raise is legal; the fixed raise in a limit game)."""
    return realise(ms.state, ActionKind.RAISE, fraction)


async def play(bot: Bot, host: str, port: int, game: Game | str | Path, *,
               observer: Callable[[MatchState], None] | None = None) -> Summary:
    """Play one match as ``bot`` against the ACPC dealer at ``host:port``; the
    :class:`Summary` (hands, chips won, decision times) when the dealer closes.

    ``game``: a :class:`Game`, a game file or a bundled game's name; ``observer`` is called
    with every state the dealer sends (also those where you do not act, such as a hand's
    final state with the opponent's cards), before ``bot.act``.

    Raises:
        OSError: if the connection cannot be made.
        BotError: if the bot raises or answers with something that is not a legal action.
        RemoteProtocolError: if the dealer does not speak ACPC.
    """
    g = game if isinstance(game, Game) else load_game(game)
    policy = bot if isinstance(bot, BotPolicy) else BotPolicy(
        bot, f"{type(bot).__module__}:{type(bot).__qualname__}")
    return await play_policy(host, port, g, policy, observer)
