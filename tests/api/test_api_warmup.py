"""The served app warms up before its first request (issue #14: the first claim opening
after a start took ~0.5 s, the ones after it 5-20 ms).

The first writes are driven in a fresh interpreter (``sys.modules`` of this test process
already holds everything other tests imported): after the app's lifespan started, the
first opening, renewal, section patch and completion must import no module.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from detente.api.warmup import WARM_PATH, warm_routes
from detente.clock import FakeClock
from detente.server import build_app
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import log_records

_FIRST_WRITES = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from starlette.testclient import TestClient
    from detente.runtime import build_service
    from detente.server import build_app
    repo, url, tip, head = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    service = build_service([repo], store_url=url)
    app = build_app(service, sweep_interval=None)
    imported = {}

    def step(name, call):
        before = set(sys.modules)
        answer = call()
        assert answer.status_code in (200, 201), answer.text
        imported[name] = sorted(set(sys.modules) - before)
        return answer.json()

    with TestClient(app, base_url="http://127.0.0.1") as http:
        http.get("/v1/repos").raise_for_status()  # the test client's own first call
        step("register", lambda: http.post("/v1/memory/documents", json={
            "repo": "repo", "path": "AGENTS.md", "class": "section_owned"}))
        holder = step("open", lambda: http.post("/v1/claims", json={
            "repo": "repo", "objective": "edit w1", "baseCommit": tip, "paths": ["w1/**"],
            "leaseTtlSeconds": 600,
            "memoryImpacts": [{"path": "AGENTS.md", "sections": ["w1"]}]}))["claim"]
        renewed = step("renew", lambda: http.post(f"/v1/claims/{holder['id']}/renew", json={
            "expectedLeaseRevision": holder["lease"]["revision"],
            "expectedClaimRevision": holder["revision"], "ttlSeconds": 600}))["claim"]
        [doc] = step("documents", lambda: http.get(
            "/v1/memory/documents", params={"repo": "repo"}))["documents"]
        step("patch", lambda: http.post("/v1/memory/sections/patch", json={
            "repo": "repo", "path": "AGENTS.md", "sectionKey": "w1",
            "expectedSectionRevision": doc["sections"][0]["revision"],
            "expectedFileHash": doc["fileHash"], "claimId": renewed["id"],
            "fencingToken": renewed["fencingToken"], "patch": {"body": "\\nnew\\n\\n"}}))
        done = step("open another", lambda: http.post("/v1/claims", json={
            "repo": "repo", "objective": "add done.txt", "baseCommit": tip,
            "paths": ["done.txt"], "leaseTtlSeconds": 600}))["claim"]
        step("complete", lambda: http.post(f"/v1/claims/{done['id']}/complete", json={
            "expectedClaimRevision": done["revision"], "fencingToken": done["fencingToken"],
            "expectedBaseRef": {"ref": "refs/heads/main", "oid": tip},
            "evidence": {"headCommit": head, "changedFiles": ["done.txt"], "tests": []}}))
    print(json.dumps(imported))
    """
)


def _git(
    repo: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        input=stdin,
        env={**os.environ, **(env or {})},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _repository(root: Path) -> tuple[Path, str, str]:
    """A repository whose main holds AGENTS.md, and a commit adding done.txt on top."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "AGENTS.md").write_text("# AGENTS\n\n## W1\n\nnone\n")
    _git(repo, "add", "AGENTS.md")
    _git(repo, "commit", "-q", "-m", "agents")
    tip = _git(repo, "rev-parse", "HEAD")
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "test-index")}
    _git(repo, "read-tree", tip, env=index)
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin="done\n")
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},done.txt", env=index)
    tree = _git(repo, "write-tree", env=index)
    head = _git(repo, "commit-tree", tree, "-p", tip, "-m", "add done.txt")
    return repo, tip, head


@pytest.mark.timeout(120)
def test_the_first_writes_after_a_served_app_started_import_nothing(tmp_path: Path) -> None:
    repo, tip, head = _repository(tmp_path)
    url = f"sqlite:///{tmp_path / 'd.db'}"
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_WRITES, str(repo), url, tip, head],
        env={**os.environ, "DETENTE_SIMILARITY": "lexical"},
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert out.returncode == 0, out.stderr
    imported: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    steps = {"register", "open", "renew", "documents", "patch", "open another", "complete"}
    assert set(imported) == steps
    assert {step: mods for step, mods in imported.items() if mods} == {}


def test_the_warm_up_walk_answers_404_and_leaves_no_access_log_line(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = Service(store, FakeClock(), [RepoConfig("demo")])
    app = build_app(service, sweep_interval=None)
    with (
        log_records("detente.access") as seen,
        TestClient(app, base_url="http://127.0.0.1") as http,
    ):
        assert http.portal is not None
        assert http.portal.call(warm_routes, app) == 404
        assert http.get("/v1/repos").status_code == 200
    assert [r for r in seen if WARM_PATH in r.getMessage()] == []
    assert [r for r in seen if "/v1/repos" in r.getMessage()]  # the log was listened to
    store.close()
