"""What changed in a claim's worktree since its base commit.

Changed files = committed since base + staged + unstaged + untracked (``.gitignore``
respected), as exact repo-relative paths (``-z`` parsing: spaces, newlines and
non-ASCII names survive).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from detente.vcs.git import Git
from detente.vcs.repo import resolve_commit

__all__ = ["DiffSummary", "changed_files", "diff_summary", "nul_split"]

# git's own heuristic: a NUL byte in the first 8000 bytes means binary.
_BINARY_SNIFF = 8000


@dataclass(frozen=True)
class DiffSummary:
    """Size of a claim's change relative to its base commit.

    Attributes:
        files: sorted repo-relative paths, as returned by :func:`changed_files`.
        insertions: lines added (net, base vs working tree, plus untracked files' lines).
        deletions: lines removed (net, base vs working tree).
    """

    files: list[str]
    insertions: int
    deletions: int


def changed_files(worktree: Path, base_oid: str) -> list[str]:
    """Every path a claim touched relative to ``base_oid``.

    The union of: committed since base (``git diff base HEAD``), staged, unstaged and
    untracked-but-not-ignored files. Renames count as both the old and the new path. A
    path changed and later reverted still appears (it was touched).

    Args:
        worktree: the worktree directory (any directory inside it).
        base_oid: the claim's base commit (any revision; resolved once).

    Returns:
        Sorted, unique, repo-relative paths with ``/`` separators, exact even for names
        with spaces, newlines or non-ASCII characters.

    Raises:
        ValidationError: ``validation_error`` (field ``baseCommit``) when ``base_oid`` is
            not a known commit.
        VcsError: ``vcs_error`` when git fails.
    """
    git, base = _top_git(worktree), resolve_commit(worktree, base_oid)
    return _changed(git, base)


def diff_summary(worktree: Path, base_oid: str) -> DiffSummary:
    """Files changed plus lines inserted/deleted relative to ``base_oid``.

    Line counts are the net difference between the base commit and the working tree
    (``git diff --numstat base``), plus every line of each untracked file as insertions.
    Binary files count 0.

    Args:
        worktree: the worktree directory (any directory inside it).
        base_oid: the claim's base commit (any revision; resolved once).

    Returns:
        The :class:`DiffSummary`.

    Raises:
        ValidationError: ``validation_error`` (field ``baseCommit``) when ``base_oid`` is
            not a known commit.
        VcsError: ``vcs_error`` when git fails.
    """
    git, base = _top_git(worktree), resolve_commit(worktree, base_oid)
    insertions = deletions = 0
    numstat = git.run("diff", "--numstat", "--no-renames", "-z", base, "--").stdout
    for record in numstat.split("\0"):
        added, _, rest = record.partition("\t")
        removed = rest.partition("\t")[0]
        if added.isdigit() and removed.isdigit():  # binary files show "-\t-"
            insertions += int(added)
            deletions += int(removed)
    for name in _untracked(git):
        insertions += _line_count(git.cwd / name)
    return DiffSummary(files=_changed(git, base), insertions=insertions, deletions=deletions)


def _changed(git: Git, base: str) -> list[str]:
    names: set[str] = set()
    for args in (
        ("diff", "--name-only", "--no-renames", "-z", base, "HEAD", "--"),
        ("diff", "--cached", "--name-only", "--no-renames", "-z", "--"),
        ("diff", "--name-only", "--no-renames", "-z", "--"),
    ):
        names.update(nul_split(git.run(*args).stdout))
    names.update(_untracked(git))
    return sorted(names)


def _untracked(git: Git) -> list[str]:
    out = git.run("ls-files", "--others", "--exclude-standard", "--full-name", "-z").stdout
    return nul_split(out)


def nul_split(out: str) -> list[str]:
    return [name for name in out.split("\0") if name]


def _top_git(worktree: Path) -> Git:
    # ls-files and line counting work relative to the working directory: use the top level.
    return Git(Path(Git(worktree).text("rev-parse", "--show-toplevel")))


def _line_count(file: Path) -> int:
    try:
        if file.is_symlink():  # git stores the link target as a one-line blob
            return 1
        data = file.read_bytes()
    except OSError:  # vanished or unreadable meanwhile: nothing to count
        return 0
    if b"\0" in data[:_BINARY_SNIFF]:
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def status_entries(porcelain: str) -> list[tuple[str, str, str | None]]:
    """The entries of ``git status --porcelain=v1 -z`` output.

    Args:
        porcelain: the command's stdout (NUL-separated records ``XY PATH``; a rename or
            copy record is followed by a record holding its source path).

    Returns:
        ``(code, path, source)`` per entry in git's order: ``code`` is the two status
        letters (``"??"`` untracked, ``"!!"`` ignored, ``"R "`` renamed...), ``source`` the
        source path of a rename or copy, else None.
    """
    out: list[tuple[str, str, str | None]] = []
    records = porcelain.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if len(record) < 4:
            continue
        code, source = record[:2], None
        if code[0] in "RC" and i < len(records):
            source, i = records[i], i + 1
        out.append((code, record[3:], source))
    return out
