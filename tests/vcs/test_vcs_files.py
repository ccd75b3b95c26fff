"""Replacing a file atomically, with or without fsync: the new bytes, the old mode, no
temporary file left behind (real files in ``tmp_path``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from detente.vcs.files import replace_file


@pytest.mark.parametrize("fsync", [True, False])
def test_a_replaced_file_holds_the_new_bytes_and_keeps_its_mode(
    tmp_path: Path, fsync: bool
) -> None:
    (tmp_path / "here").mkdir()
    target = tmp_path / "here" / "run.sh"
    target.write_bytes(b"old\n")
    os.chmod(target, 0o755)

    replace_file(target, b"new\n", fsync=fsync)

    assert target.read_bytes() == b"new\n" and target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in target.parent.iterdir()] == ["run.sh"]


def test_a_new_file_gets_its_directories(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "NOTES.md"

    replace_file(target, b"n\n", fsync=True)

    assert target.read_bytes() == b"n\n"


def test_a_write_that_fails_halfway_leaves_the_file_and_no_temporary_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "here").mkdir()
    target = tmp_path / "here" / "DECISIONS.md"
    target.write_bytes(b"kept\n")

    with pytest.raises(TypeError):
        replace_file(target, "not bytes", fsync=True)  # type: ignore[arg-type]

    assert target.read_bytes() == b"kept\n"
    assert [p.name for p in target.parent.iterdir()] == ["DECISIONS.md"]
