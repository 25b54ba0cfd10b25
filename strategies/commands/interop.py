"""``acpc-strategy export-openspiel`` and ``import-openspiel``: the command lines of
:mod:`strategies.interop.openspiel`.

* ``export-openspiel FILE --out F.json [--openspiel-game G] [--check]``: a strategy file (a
  path or a bundled name) as an OpenSpiel policy file, of OpenSpiel's ``kuhn_poker`` /
  ``leduc_poker`` (``auto``, the default, when the game is one) or ``universal_poker`` (any
  game whose walk fits, betting ``fcpa`` or ``fchpa`` in no-limit); ``--check`` also measures
  it with OpenSpiel's ``exploitability`` module beside ours.
* ``import-openspiel F.json --out F.strat [--game GAME] [--check]``: a policy file as a
  strategy file (betting: the whole game, or universal_poker's ``fcpa`` / ``fchpa``; lossless
  cards), for ``GAME`` (default: the policy file's ``acpc_game``, else the bundled game that
  is its OpenSpiel game); ``--check`` as above.

Light at import (argparse only): the work imports numpy, the strategy machinery and OpenSpiel
when a command runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from strategies.commands.defaults import PROG


def add_parsers(sub: Any) -> None:
    """Add both commands to ``acpc-strategy``'s sub-parsers."""
    e = sub.add_parser("export-openspiel",
                       help="a strategy file as an OpenSpiel policy (JSON): kuhn_poker, "
                       "leduc_poker or universal_poker")
    e.add_argument("file", help="strategy file or bundled name (leduc.limit.2p.strat, ...)")
    e.add_argument("--openspiel-game", default="auto",
                   choices=("auto", "kuhn_poker", "leduc_poker", "universal_poker"),
                   help="the OpenSpiel game to write for (default auto: kuhn_poker or "
                   "leduc_poker when the game is one, else universal_poker)")
    e.add_argument("--out", required=True, type=Path, help="the JSON policy file to write")
    e.add_argument("--check", action="store_true",
                   help="also measure the exported policy with OpenSpiel's exploitability")
    i = sub.add_parser("import-openspiel",
                       help="an OpenSpiel policy (JSON) as a strategy file")
    i.add_argument("policy", type=Path, help="the JSON policy file (export-openspiel's format)")
    i.add_argument("--out", required=True, type=Path, help="the strategy file to write")
    i.add_argument("--game", default=None,
                   help="the ACPC game (default: the file's acpc_game, else the bundled "
                   "game of its OpenSpiel game)")
    i.add_argument("--check", action="store_true",
                   help="also measure the policy with OpenSpiel's exploitability")


def _figures(ours: Any, theirs: tuple[float | None, float]) -> str:
    line = f"NashConv ours {ours.nash_conv:.12g}, OpenSpiel {theirs[1]:.12g} " \
           f"(difference {abs(ours.nash_conv - theirs[1]):.2g})"
    if theirs[0] is not None:
        line += (f"; exploitability ours {ours.exploitability:.12g}, OpenSpiel "
                 f"{theirs[0]:.12g} (difference {abs(ours.exploitability - theirs[0]):.2g})")
    return line + "; chips per hand in both"


def export_openspiel(args: argparse.Namespace) -> int:
    from agent.abstraction.buckets import card_abstraction_from_spec
    from agent.agents import resolve_strategy
    from agent.strategy.fileformat import load_strategy
    from strategies.games.abstract import build_abstract_game
    from strategies.interop.openspiel import (
        check_walkable,
        choose_spiel_game,
        export_policy,
        openspiel_exploitability,
    )
    from strategies.measure.best_response import exploitability, strategy_table

    path = resolve_strategy(args.file)
    strategy = load_strategy(path)
    spiel = choose_spiel_game(strategy.game, strategy.betting, args.openspiel_game)
    if spiel.name == "universal_poker":
        check_walkable(strategy.tree)  # before the card abstraction and table are built
    cards = card_abstraction_from_spec(strategy.game, strategy.cards)
    abstract = build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)
    table = strategy_table(abstract, strategy)
    doc = export_policy(spiel, strategy.tree, cards, table,
                        {"file": path.name, "checksum": strategy.checksum,
                         "betting": strategy.betting.name, "cards": strategy.cards})
    _write_json(args.out, doc)
    print(f"{PROG}: {len(doc['policy'])} OpenSpiel information states of {_named(spiel)} "
          f"written to {str(args.out)!r}")
    if args.check:
        print(f"{PROG}: {_figures(exploitability(abstract, table), openspiel_exploitability(doc))}")
    return 0


def _named(spiel: Any) -> str:
    """``leduc_poker {'players': 2}``; universal_poker with its betting abstraction only."""
    if spiel.name == "universal_poker":
        return f"universal_poker (bettingAbstraction {spiel.parameters['bettingAbstraction']})"
    return f"{spiel.name} {spiel.parameters}"


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    from agent.fileio import write_atomic

    write_atomic(path, (json.dumps(doc, indent=1) + "\n").encode("utf-8"))


def import_openspiel(args: argparse.Namespace) -> int:
    from agent.abstraction.actions import PRESETS, build_tree
    from agent.abstraction.buckets import LosslessCards
    from agent.acpc.gamedef import parse_gamedef
    from agent.acpc.gamefiles import load_game
    from agent.strategy.fileformat import dump_strategy, load_strategy
    from strategies.games.abstract import build_abstract_game
    from strategies.interop.openspiel import (
        check_policy_game,
        default_game_text,
        import_table,
        openspiel_exploitability,
        read_policy,
        spiel_game_of,
        universal_betting,
    )
    from strategies.measure.best_response import exploitability, strategy_table

    doc = read_policy(args.policy)
    spiel = spiel_game_of(doc, str(args.policy))
    if args.game is not None:
        game = load_game(args.game)
    elif isinstance(doc.get("acpc_game"), str):
        game = parse_gamedef(doc["acpc_game"], f"{args.policy}: acpc_game")
    else:
        game = parse_gamedef(default_game_text(spiel), spiel.name)
    check_policy_game(spiel, game, str(args.policy))  # before any tree is built
    betting = universal_betting(spiel) if spiel.name == "universal_poker" else PRESETS["fcpa"]
    tree = build_tree(game, betting)
    cards = LosslessCards(game)
    imported = import_table(doc, tree, cards, str(args.policy))
    dump_strategy(args.out, game, betting, cards.spec, imported.table, tree=tree,
                  meta={"solver": "openspiel-import", "source": str(args.policy.name),
                        "openspiel_game": spiel.name,
                        "disagreement": imported.disagreement})
    note = ("" if imported.disagreement <= 1e-12 else
            f"; OpenSpiel rows merged into one row differ by up to "
            f"{imported.disagreement:.3g} (suit isomorphs played differently): the file "
            f"holds their mean")
    print(f"{PROG}: {imported.states} OpenSpiel information states of {spiel.name} as "
          f"{str(args.out)!r} (betting {betting.name}, lossless cards){note}")
    if args.check:
        abstract = build_abstract_game(game, betting, cards, tree=tree)
        theirs = openspiel_exploitability(doc)
        ours = exploitability(abstract, imported.table)
        print(f"{PROG}: imported table: {_figures(ours, theirs)}")
        stored = strategy_table(abstract, load_strategy(args.out, game, tree=tree))
        print(f"{PROG}: as stored (float32 probabilities): NashConv "
              f"{exploitability(abstract, stored).nash_conv:.12g}")
    return 0


COMMANDS = {"export-openspiel": export_openspiel, "import-openspiel": import_openspiel}
"""The command functions by name (strategies.cli dispatches here)."""
