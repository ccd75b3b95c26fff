"""``detente claim check`` on a symbol claim: the file limited to its symbols, one symbol
by ``path::Name``, and the worktree's stray edits named (real Python/TS/Go repository)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Cli

from source_repo import make_source_repo

RETRY = "src/settlement/retry.py"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The Python/TypeScript/Go source repository (overrides the package's plain one)."""
    root = tmp_path / "repo"
    make_source_repo(root)
    return root


def test_claim_check_answers_a_symbol_claim_on_its_file_and_its_symbols(
    cli: Cli, repo: Path
) -> None:
    tree = repo.parent / "bob"
    opened = cli.open(agent="bob", worktree_dir=str(tree), symbol="RetryPolicy.give_up")
    claim = opened["claim"]["id"]
    assert opened["claim"]["status"] == "active"

    code, answer = cli.json("claim", "check", claim, RETRY)
    assert code == 0
    assert answer["limitedTo"] == {RETRY: [f"{RETRY}::RetryPolicy.give_up"]}
    text = cli("claim", "check", claim, RETRY)
    assert f"limited to {RETRY}::RetryPolicy.give_up" in text.stdout

    code, answer = cli.json("claim", "check", claim, f"{RETRY}::RetryPolicy.give_up")
    assert (code, answer["paths"]) == (0, [f"{RETRY}::RetryPolicy.give_up"])
    code, refused = cli.json("claim", "check", claim, f"{RETRY}::default_policy")
    assert (code, refused["code"]) == (8, "out_of_scope")

    source = tree / RETRY
    source.write_text(source.read_text().replace("RetryPolicy(0.1, 30.0)", "RetryPolicy(1, 30)"))
    code, refused = cli.json("claim", "check", claim, RETRY)
    assert (code, refused["code"]) == (8, "out_of_scope")
    assert f"{RETRY}::default_policy outside the claim's symbols" in refused["detail"]


def test_claim_check_on_a_module_claim_covers_its_files_and_their_symbols(
    cli: Cli, repo: Path
) -> None:
    opened = cli.open(agent="carol", worktree_dir=str(repo.parent / "c"), module="internal/storage")
    claim = opened["claim"]["id"]
    store = "internal/storage/store.go"
    code, answer = cli.json("claim", "check", claim, store, f"{store}::Store.Put")
    assert (code, answer["paths"]) == (0, [store, f"{store}::Store.Put"])
    assert "limitedTo" not in answer
    code, refused = cli.json("claim", "check", claim, "web/src/client.ts::makeClient")
    assert (code, refused["paths"]) == (8, ["web/src/client.ts::makeClient"])
