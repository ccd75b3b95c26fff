"""An append-only chain of records kept in git under one ref, written with plumbing.

Each record is a blob (``record.json``) in the tree of one commit; each commit's parent
is the previous record's, and the ref (e.g. ``refs/detente/checkpoints``) names the
newest. Appending is ``hash-object -w``, ``mktree``, ``commit-tree -p <tip>`` and
``update-ref <ref> <new> <tip>``: a compare-and-swap on the tip, so two writers never
lose each other's record (the loser reads the new tip and appends again). No working
tree, index or ``HEAD`` is touched, and the chain travels with ``git push``/``fetch``
of the ref like any other history.
"""

from __future__ import annotations

from pathlib import Path

from detente.vcs.git import Git

__all__ = ["append_record", "read_records"]

_FILE = "record.json"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "detente",
    "GIT_AUTHOR_EMAIL": "detente@localhost",
    "GIT_COMMITTER_NAME": "detente",
    "GIT_COMMITTER_EMAIL": "detente@localhost",
}
_ATTEMPTS = 5


def _tip(git: Git, ref: str) -> str | None:
    found = git.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return found.stdout.strip() if found.returncode == 0 else None


def append_record(repo: Path, ref: str, record: bytes, message: str) -> str:
    """Append ``record`` to the chain under ``ref``; the new commit's OID.

    Raises:
        GitError: ``vcs_error`` when git fails, or the tip kept moving under us.
    """
    git = Git(repo)
    blob = git.text("hash-object", "-w", "--stdin", input=record)
    tree = git.text("mktree", input=f"100644 blob {blob}\t{_FILE}\n".encode())
    for _ in range(_ATTEMPTS):
        tip = _tip(git, ref)
        parent = ["-p", tip] if tip else []
        new = git.text("commit-tree", tree, *parent, "-m", message, env=_IDENTITY)
        moved = git.run("update-ref", ref, new, tip or "", check=False)
        if moved.returncode == 0:
            return new
    raise moved.error()


def read_records(repo: Path, ref: str) -> list[bytes]:
    """Every record of the chain under ``ref``, oldest first (empty: no such ref).

    Raises:
        GitError: ``vcs_error`` when git fails reading an existing chain.
    """
    git = Git(repo)
    tip = _tip(git, ref)
    if tip is None:
        return []
    commits = git.text("rev-list", "--first-parent", "--reverse", tip).split()
    names = "".join(f"{c}:{_FILE}\n" for c in commits).encode()
    out = git.run("cat-file", "--batch", input=names).stdout_bytes
    records: list[bytes] = []
    pos = 0
    for _ in commits:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) != 3:  # "<name> missing": a commit without a record is skipped
            pos = end + 1
            continue
        size = int(header[2])
        records.append(out[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return records
