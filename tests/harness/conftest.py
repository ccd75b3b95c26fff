"""The harness hook tests: real git repositories, real stores, the hooks run as processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import isolate_environment


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config and no detente settings; subprocesses inherit this environment."""
    isolate_environment(tmp_path, monkeypatch)
