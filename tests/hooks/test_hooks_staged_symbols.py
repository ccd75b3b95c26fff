"""The pre-commit guard judges symbol claims by what is being committed: the staged diff
(the index against ``HEAD``, blobs read from the index), never the working files.

So ``git add -p`` of only the claim's own method commits, and a staged edit of another
claim's function is refused even when the working file no longer shows it. Real
repository, real ``git commit``, real tree-sitter grammars, local mode; Python,
TypeScript and Go.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hooks_harness import detente, git, run_git

from source_repo import make_source_repo

#: Per language: the file, (mine: symbol, old, new), (theirs: symbol, old, new).
CASES = {
    "python": (
        "src/settlement/retry.py",
        ("RetryPolicy.backoff", "random.uniform(0, delay)", "random.uniform(0.0, delay)"),
        ("RetryPolicy.give_up", "return attempt > 8", "return attempt > 4"),
    ),
    "typescript": (
        "web/src/client.ts",
        ("ApiClient.close", "close(): void {}", "close(): void { return; }"),
        ("ApiClient.fetchClaims", "return session.get(", "return await session.get("),
    ),
    "go": (
        "internal/storage/store.go",
        ("Store.Put", "s.values[key] = value", 's.values[key] = value + ""'),
        ("Store.Get", "v, ok := s.values[key]", 'v, ok := s.values[key+""]'),
    ),
}


def _edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "checkout"
    make_source_repo(repo)
    monkeypatch.setenv("DETENTE_LOCAL", "1")
    detente("--repo", str(repo), "hooks", "install")
    return repo


def _claims(repo: Path, rel: str, mine: str, theirs: str) -> tuple[str, str]:
    ids = []
    for agent, symbol in (("me", mine), ("them", theirs)):
        opened = detente(
            "--repo", str(repo), "claim", "open", "-o", f"{agent} edits {symbol}",
            "--symbol", f"{rel}::{symbol}", "--agent", agent, "--no-worktree",
        )  # fmt: skip
        assert opened["claim"]["status"] == "active"
        ids.append(str(opened["claim"]["id"]))
    return ids[0], ids[1]


@pytest.mark.parametrize("language", list(CASES))
def test_staging_only_the_claims_own_method_commits_while_another_claims_edit_stays_unstaged(
    checkout: Path, language: str
) -> None:
    rel, (mine, m_old, m_new), (theirs, t_old, t_new) = CASES[language]
    me, _ = _claims(checkout, rel, mine, theirs)
    _edit(checkout, rel, m_old, m_new)
    git(checkout, "add", rel)
    _edit(checkout, rel, t_old, t_new)  # the other claim's function: not staged

    done = run_git(checkout, "commit", "-q", "-m", "mine only", env={"DETENTE_CLAIM": me})

    assert done.returncode == 0, done.stderr
    committed = git(checkout, "show", "HEAD", "--format=", "--", rel)
    assert m_new in committed
    assert t_new not in committed
    assert t_new in (checkout / rel).read_text()  # still in the working file, unstaged


@pytest.mark.parametrize("language", list(CASES))
def test_a_staged_edit_of_another_claims_function_is_refused_though_the_working_file_hides_it(
    checkout: Path, language: str
) -> None:
    rel, (mine, m_old, m_new), (theirs, t_old, t_new) = CASES[language]
    me, them = _claims(checkout, rel, mine, theirs)
    before = git(checkout, "rev-parse", "HEAD")
    _edit(checkout, rel, m_old, m_new)
    _edit(checkout, rel, t_old, t_new)
    git(checkout, "add", rel)
    _edit(checkout, rel, t_new, t_old)  # reverted in the working file only

    done = run_git(checkout, "commit", "-q", "-m", "sneaky", env={"DETENTE_CLAIM": me})

    assert done.returncode != 0
    assert f"held by claim {them}" in done.stderr
    assert "commit refused" in done.stderr
    assert git(checkout, "rev-parse", "HEAD") == before
