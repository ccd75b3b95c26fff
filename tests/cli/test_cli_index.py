"""``detente reconcile``, ``detente symbols`` and ``detente search`` on a real repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Cli

from source_repo import make_source_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The Python/TypeScript/Go source repository (overrides the package's plain one)."""
    root = tmp_path / "repo"
    make_source_repo(root)
    return root


def test_reconcile_symbols_and_search_from_the_command_line(cli: Cli, repo: Path) -> None:
    tree = repo.parent / "bob"
    opened = cli.open("web/src/client.ts", agent="bob", worktree_dir=str(tree), symbol="makeClient")
    claim_id = opened["claim"]["id"]
    assert opened["claim"]["symbols"] == ["web/src/client.ts::makeClient"]
    client = tree / "web/src/client.ts"
    client.write_text(client.read_text().replace("close(): void {}", "close(): void { }"))

    code, touched = cli.json("symbols", claim_id)
    assert code == 0
    assert touched["symbols"] == ["web/src/client.ts::ApiClient.close"]

    code, result = cli.json(
        "reconcile", "--claim-a", claim_id, "--actual-a", "--symbol-b", "ApiClient"
    )
    assert code == 0
    assert [s["target"] for s in result["shared"]] == ["web/src/client.ts::ApiClient.close"]

    text = cli("reconcile", "--symbol-a", "Store.Get", "--symbol-b", "Store.Put")
    assert text.exit_code == 0
    assert "No shared symbol or file." in text.stdout

    ambiguous = cli("reconcile", "--symbol-a", "backoff", "--path-b", "x.py")
    assert ambiguous.exit_code == 2
    assert "ambiguous" in ambiguous.stdout + ambiguous.stderr

    code, found = cli.json("search", "api client")
    assert code == 0
    assert found["results"][0]["claimId"] == claim_id
