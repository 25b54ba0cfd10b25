"""Every command example of README.md and docs/, and the long ones run.

::

    python scripts/doc_examples.py            # list every example and how it is checked
    python scripts/doc_examples.py --long     # run the long ones (minutes to hours)

An example is a line of a fenced code block that starts with a command of
``[project.scripts]`` (``.venv/bin/`` allowed; ``\\`` continuations and quoted arguments that
span lines joined; a ``# comment`` dropped). Each is one of:

* short (:data:`SHORT`): ``tests/test_doc_examples.py`` runs it, in the order written, in a
  scratch directory, and checks exit status 0;
* live: it needs something a page sets up by hand (a dealer waiting for its agents, a
  dealer's ports, a terminal player, a Ray cluster, a placeholder such as ``$F`` or
  ``...``) or it changes the installation (``--bundle``, ``acpc-arena compile``): the test
  parses it only;
* long: everything else. ``--long`` runs them in page order, each page in its own scratch
  directory (``tests`` and ``agent`` linked in, so ``tests/data/...`` and
  ``agent/data/strategies/...`` resolve as in a checkout; what an example writes, even under
  ``scripts/results/``, stays in the scratch directory), and reports status and seconds; an
  example whose input file no earlier step of its page writes is reported as needing it,
  not run.

Every example, whatever its kind, is parsed by ``tests/test_doc_examples.py`` with the very
parser its command uses: a renamed flag or a deprecated spelling in the docs fails there.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("acpc-agent", "acpc-dealer", "acpc-log", "acpc-match", "acpc-strategy",
            "acpc-arena")

SHORT = (
    "acpc-strategy inspect leduc.limit.2p.strat --samples 3",
    "acpc-strategy exploit kuhn.limit.3p.strat",
    "acpc-strategy solve --game leduc.limit.2p.game --iterations 2000 --out leduc.strat",
    "acpc-strategy exploit leduc.strat",
    "acpc-strategy inspect leduc.strat --samples 3",
    "acpc-log phh holdem.nolimit.2p.reverse_blinds.game tests/data/logs/nl1000.log --out "
    "nl.phhs",
    "acpc-log from-phh holdem.nolimit.2p.reverse_blinds.game nl.phhs --out nl.log",
    "acpc-arena compile --status",
)
"""The examples the test runs, in this order (each a few CPU-seconds at most)."""

_LIVE = re.compile(r"^acpc-dealer |127\.0\.0\.1|HEAD:|\$|\.\.\.|--human|--backend ray|"
                   r"--bundle|^acpc-arena compile( --remove)?$")
"""What a page sets up by hand, or what changes the installation: a dealer (it waits for
its agents), an agent on a dealer's port, a terminal player, a Ray cluster, a placeholder
(``$F``, ``...``), ``solve --bundle`` (rewrites a bundled file), ``acpc-arena compile`` and
``--remove`` (build or delete the compiled core in use)."""


_SHELL = frozenset({">", ">>", "2>", "2>&1", "|", "&&", ";"})
"""Shell words that end a command (redirections, pipes, lists)."""


@dataclass(frozen=True)
class Example:
    """One command example: the page, the command line as written (joined), its words."""

    page: str
    line: str
    argv: tuple[str, ...]

    @property
    def kind(self) -> str:
        """``short``, ``live`` or ``long`` (module docstring)."""
        if self.line in SHORT:
            return "short"
        return "live" if _LIVE.search(self.line) else "long"


def _words(line: str) -> list[str] | None:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # an open quote: the argument goes on on the next line
        return None


def examples() -> list[Example]:
    """Every example of README.md and docs/**/*.md, in page order."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found: list[Example] = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^ *```[\w-]*\n(.*?)^ *```", text, re.S | re.M):
            lines = block.splitlines()
            i = 0
            while i < len(lines):
                line = lines[i].strip()
                i += 1
                while i < len(lines) and (line.endswith("\\") or _words(line) is None):
                    line = (line[:-1].rstrip() if line.endswith("\\") else line) + " " + \
                        lines[i].strip()
                    i += 1
                line = re.sub(r"^\.venv/bin/", "", line)
                words = _words(line)
                if not words or words[0] not in COMMANDS:
                    continue
                if len(words) > 1 and words[1].endswith(":"):  # output, not a command
                    continue
                if words[-1] == "&":  # run in the background: the command is the rest
                    words = words[:-1]
                ends = [k for k, w in enumerate(words) if w in _SHELL]
                if ends:  # output redirected or piped: the command is what comes before
                    words = words[: ends[0]]
                shown = line.split(" #", 1)[0].rstrip()
                found.append(Example(str(page.relative_to(ROOT)), shown, tuple(words)))
    return found


_INPUT = re.compile(r"\.(strat|log|phhs|json|game|msgpack|toml)$")


def _missing_input(example: Example, scratch: Path) -> str | None:
    """An input file the example names that neither exists (here or bundled) nor is written
    by this example (the argument after ``--out``/``--json``/``--plot``)."""
    from agent.data import bundled_games, bundled_strategies

    outputs = {example.argv[i + 1] for i, w in enumerate(example.argv[:-1])
               if w in ("--out", "--json", "--plot", "--csv")}
    for word in example.argv[1:]:
        if word in outputs:
            continue
        for piece in re.split(r"[=,]", word):  # NAME=FILE,mapping=... in a variant
            if (_INPUT.search(piece) and not (scratch / piece).exists()
                    and piece not in bundled_games() and piece not in bundled_strategies()):
                return piece
    return None


def run_long(timeout: float) -> int:
    """Run every long example, page by page; the number that failed."""
    failed = 0
    by_page: dict[str, list[Example]] = {}
    for example in examples():
        by_page.setdefault(example.page, []).append(example)
    for page, items in by_page.items():
        with tempfile.TemporaryDirectory(prefix="doc-examples-") as tmp:
            scratch = Path(tmp)
            for inputs in ("tests", "agent"):  # read as in a checkout; results go elsewhere
                (scratch / inputs).symlink_to(ROOT / inputs)
            for example in items:
                if example.kind != "long":
                    continue
                need = _missing_input(example, scratch)
                if need is not None:
                    print(f"needs {need}: {page}: {example.line}", flush=True)
                    continue
                start = time.monotonic()
                try:
                    status = subprocess.run(
                        [str(Path(sys.executable).parent / example.argv[0]),
                         *example.argv[1:]], cwd=scratch, timeout=timeout,
                        capture_output=True, check=False).returncode
                except subprocess.TimeoutExpired:
                    status = -1
                failed += status != 0
                print(f"{'ok' if status == 0 else f'FAILED ({status})'} "
                      f"{time.monotonic() - start:.0f} s: {page}: {example.line}", flush=True)
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="run the long examples")
    parser.add_argument("--timeout", type=float, default=3600.0,
                        help="seconds per example (default 3600)")
    args = parser.parse_args()
    if args.long:
        return 1 if run_long(args.timeout) else 0
    for example in examples():
        print(f"{example.kind:5} {example.page}: {example.line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
