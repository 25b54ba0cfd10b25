"""Atomic writes: the whole file or the old one, and the mode a plain open would give."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent.fileio import atomic_writer, write_atomic


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_files_get_the_mode_of_a_plain_open(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "f.bin", b"data")
        with open(tmp_path / "plain.bin", "wb") as f:
            f.write(b"data")
    finally:
        os.umask(old)
    got = stat.S_IMODE((tmp_path / "f.bin").stat().st_mode)
    assert got == mode == stat.S_IMODE((tmp_path / "plain.bin").stat().st_mode)


def test_an_error_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_writer(target) as f:
        f.write(b"half")
        raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]
