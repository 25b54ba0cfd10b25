"""The dependency rule: the core and the dealer import no numba, numpy or msgpack."""

from __future__ import annotations

import subprocess
import sys

import pytest

FORBIDDEN = ("numba", "numpy", "msgpack", "llvmlite")


@pytest.mark.parametrize(
    "module",
    [
        "agent.acpc.cards",
        "agent.acpc.gamedef",
        "agent.acpc.betting",
        "agent.acpc.betsize",
        "agent.acpc.matchstate",
        "agent.acpc.protocol",
        "agent.acpc.dealing",
        "agent.acpc.evaluator",
        "agent.games",
        "dealer.logfile",
        "dealer.logtool",
    ],
)
def test_core_and_dealer_import_no_heavy_modules(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


def test_core_is_stdlib_only() -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import agent.acpc.betting, agent.acpc.matchstate, agent.acpc.protocol\n"
        "import agent.acpc.dealing, agent.acpc.evaluator, agent.acpc.betsize\n"
        "new = {m.split('.')[0] for m in set(sys.modules) - before}\n"
        "stdlib = sys.stdlib_module_names\n"
        "print(sorted(m for m in new if m not in stdlib and m != 'agent'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
