"""The ``pre-receive`` hook reads which symbols each pushed commit touches, on both sides
of its diff, in Python, TypeScript and Go (a real repository, real tree-sitter grammars)."""

from __future__ import annotations

from pathlib import Path

from detente.hooks.gitread import HookRepo
from detente.hooks.symbol_edits import with_symbol_edits

from source_repo import commit_all, make_source_repo


def _edit(repo: Path, rel: str, old: str, new: str) -> None:
    path = repo / rel
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_each_commit_names_the_symbols_its_diff_touches_in_three_languages(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    base = make_source_repo(repo)
    _edit(repo, "src/settlement/retry.py", "return attempt > 8", "return attempt > 4")
    _edit(repo, "web/src/client.ts", "close(): void {}", "close(): void { return; }")
    py_ts = commit_all(repo, "python and typescript")
    _edit(repo, "internal/storage/store.go", "s.values[key] = value", 's.values[key] = value + ""')
    (repo / "README.md").write_text("# demo, edited\n")
    go = commit_all(repo, "go and a readme")
    hook = HookRepo(repo, environ={})

    commits = with_symbol_edits(hook, hook.added_commits(base, go))

    assert [c.oid for c in commits] == [py_ts, go]
    assert commits[0].edits == (
        ("src/settlement/retry.py", ("src/settlement/retry.py::RetryPolicy.give_up",), False),
        ("web/src/client.ts", ("web/src/client.ts::ApiClient.close",), False),
    )
    assert commits[1].edits == (
        ("internal/storage/store.go", ("internal/storage/store.go::Store.Put",), False),
    )  # README.md has no symbols: judged as a whole file
    assert commits[1].to_wire()["edits"] == [
        {
            "path": "internal/storage/store.go",
            "symbols": ["internal/storage/store.go::Store.Put"],
            "outside": False,
        }
    ]


def test_a_removed_function_is_named_from_the_parent_side_and_a_root_commit_has_none(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    base = make_source_repo(repo)
    _edit(
        repo,
        "src/settlement/retry.py",
        "\n\ndef default_policy() -> RetryPolicy:\n    return RetryPolicy(0.1, 30.0)\n",
        "\n",
    )
    head = commit_all(repo, "drop default_policy")
    hook = HookRepo(repo, environ={})

    [removed] = with_symbol_edits(hook, [hook.commit(head)])
    [root] = with_symbol_edits(hook, [hook.commit(base)])

    [(path, symbols, _)] = removed.edits
    assert path == "src/settlement/retry.py"
    assert symbols == ("src/settlement/retry.py::default_policy",)
    assert root.edits == ()
    assert "edits" not in root.to_wire()
