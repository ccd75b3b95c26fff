"""Fixtures of the surface parity tests (:mod:`parity_world`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from parity_world import make_repo


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)
