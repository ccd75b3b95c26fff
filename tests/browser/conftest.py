"""Browser tests: Playwright drives Debian's Chromium against a real ``detente serve``.

Chromium is launched from ``/usr/bin/chromium`` (``$DETENTE_CHROMIUM`` overrides); never
``playwright install``. A missing browser skips these tests on a developer machine and
fails them in CI (``CI=true``). Every test leaves a screenshot in the artifacts directory
(``$DETENTE_ARTIFACTS``, else ``artifacts/`` under pytest's base temporary directory),
printed at the end of the run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import CHROMIUM_ARGS, Server, free_port, git

from storage.servers import require_binary

playwright_api = pytest.importorskip("playwright.sync_api")

_ARTIFACTS: list[Path] = []


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user git config and no detente settings; the server inherits this environment."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    for key in list(os.environ):
        if key.startswith("DETENTE_") and key not in ("DETENTE_CHROMIUM", "DETENTE_ARTIFACTS"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project with history and a CODEOWNERS file (``src/app/`` is @alice's)."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {
        "src/app/core.py": "x = 1\n",
        "src/app/api.py": "def f():\n    return 1\n",
        "docs/guide.md": "# guide\n",
        "CODEOWNERS": "src/app/ @alice\ndocs/ @bob\n",
    }
    for rel, content in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "scaffold")
    return root


@pytest.fixture
def server(repo: Path) -> Iterator[Server]:
    """A real server on a fixed free port (so a restart comes back at the same URL)."""
    srv = Server(repo, free_port())
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Not longer: Playwright's sync API holds an asyncio loop
    running on the main thread while it is started, which would break later async tests."""
    found = os.environ.get("DETENTE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    executable = require_binary("chromium", found if Path(found).exists() else None)
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("DETENTE_ARTIFACTS")
    path = Path(where) if where else tmp_path_factory.getbasetemp() / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def page(
    browser: Any, artifacts: Path, server: Server, request: pytest.FixtureRequest
) -> Iterator[Any]:
    """A fresh 1280x900 page; its screenshot is saved when the test ends (pass or fail),
    while the server still runs (the page depends on it, so it is torn down first)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    try:
        yield pg
    finally:
        shot = artifacts / f"{request.node.name}.png"
        try:
            pg.screenshot(path=str(shot), full_page=True)
            _ARTIFACTS.append(shot)
        finally:
            context.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _ARTIFACTS:
        terminalreporter.write_line(
            f"browser test screenshots ({len(_ARTIFACTS)}): {_ARTIFACTS[0].parent}"
        )
