"""Protected refs: compare-and-swap updates, and the commit facts evidence is checked on.

:func:`cas_update_ref` is git's native CAS (``git update-ref <ref> <new> <old>``): the
ref moves only if it still points at ``old``; otherwise git's refusal becomes
:class:`~detente.errors.StaleBase` carrying the ref's current OID in ``actual``. The
update carries detente's pass (:mod:`detente.vcs.hookpass`): the shared repository's
hooks let this already-checked update through without asking the server again.

:func:`commit_facts` reads, in three git invocations, what completion evidence is
validated against (the integration race runs it thousands of times): the head commit
and its committer time, the expected base, the claim's base and branch tip (one
``cat-file --batch``), ancestry (one ``rev-list``) and the diff base..head (one
``diff-tree``). The hooks read pushed commits themselves (:mod:`detente.hooks.gitread`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from detente.errors import StaleBase, ValidationError
from detente.vcs.git import Git

__all__ = [
    "ZERO_OID",
    "CommitFacts",
    "cas_update_ref",
    "check_ref_name",
    "commit_facts",
    "diff_names",
    "transient_names",
]

#: git's "no object" OID (a ref that does not exist, in hooks).
ZERO_OID = "0" * 40

TRAILER = "Detente-Claim"

_REF = re.compile(r"^refs/[A-Za-z0-9._+/-]+$")
_IS_AT = re.compile(r"is at ([0-9a-f]{40}|[0-9a-f]{64}) but expected")
# Milliseconds git retries a ref lock held by a concurrent writer before failing.
_LOCK_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class CommitFacts:
    """What git says about the commits named by completion evidence.

    Attributes:
        head_oid: the head resolved to a full OID; None when it is not a commit.
        head_time: the head's committer time (UTC, whole seconds).
        base_oid: the expected base resolved; None when it is not a commit.
        claim_base_oid: the claim's base commit resolved; None when unknown.
        branch_head: the tip of ``refs/heads/<branch>``; None without a branch or ref.
        from_base / from_claim_base: the head descends from (or is) that commit.
        diff: paths changed between ``base_oid`` and the head (renames as both paths).
        transient: ``(path, commit)`` for every path a commit between ``base_oid`` and
            the head changed that ``diff`` does not show (a later commit undid it), the
            first (oldest) such commit per path; merges are not walked (``--no-merges``).
    """

    head_oid: str | None
    head_time: datetime | None
    base_oid: str | None
    claim_base_oid: str | None
    branch_head: str | None
    from_base: bool
    from_claim_base: bool
    diff: tuple[str, ...]
    transient: tuple[tuple[str, str], ...] = ()


def check_ref_name(ref: str, *, field: str = "expectedBaseRef.ref") -> str:
    """Refuse anything but a plain ``refs/...`` name (no ``..``, no ``.lock``, no options).

    Raises:
        ValidationError: ``validation_error`` naming ``field``.
    """
    bad = (
        not _REF.match(ref)
        or ".." in ref
        or "//" in ref
        or ref.endswith(("/", ".lock", "."))
        or any(part.startswith(".") for part in ref.split("/"))
    )
    if bad:
        raise ValidationError(
            f"{ref!r} is not a full ref name such as refs/heads/main", field=field, value=ref
        )
    return ref


def cas_update_ref(repo: Path, ref: str, new: str, old: str, *, message: str) -> None:
    """Move ``ref`` from ``old`` to ``new`` atomically, or not at all.

    Args:
        repo: a directory of the repository (working tree or bare).
        ref: a full ref name (``refs/heads/main``).
        new: the OID to set.
        old: the OID the ref must point at now (:data:`ZERO_OID`: must not exist).
        message: the reflog message.

    Raises:
        StaleBase: ``stale_base``; ``actual`` is the ref's current OID (None if it does not
            exist), ``expected`` is ``old``.
        ValidationError: ``ref`` is not a full ref name.
        VcsError: ``vcs_error`` when git fails for another reason.
    """
    from detente.vcs.hookpass import pass_env

    check_ref_name(ref)
    git = Git(repo)
    result = git.run(
        "-c",
        f"core.filesRefLockTimeout={_LOCK_TIMEOUT_MS}",
        "update-ref",
        "-m",
        message,
        ref,
        new,
        old,
        check=False,
        env=pass_env(repo, ref, old, new),  # the server-side hooks know it was checked
    )
    if result.ok:
        return
    # git says where the ref is ("is at <oid> but expected <old>"); otherwise read it.
    found = _IS_AT.search(result.stderr)
    current = found.group(1) if found else _resolve(git, ref)
    if current != old:
        raise StaleBase(
            f"{ref} is at {current or 'nothing'}, not {old}: another integration moved it",
            expected=old,
            actual=current,
            ref=ref,
        )
    raise result.error()


def commit_facts(
    repo: Path, *, head: str, base: str, claim_base: str, branch: str | None
) -> CommitFacts:
    """Read the facts of :class:`CommitFacts` (three git invocations at most, plus one
    per failed ancestry check).

    Args:
        repo: a directory of the repository.
        head: the evidence's head commit (any revision spelling).
        base: ``expectedBaseRef.oid``.
        claim_base: the claim's base commit.
        branch: the claim's branch (short name), or None.

    Raises:
        VcsError: ``vcs_error`` when git fails.
    """
    git = Git(repo)
    names = [f"{head}^{{commit}}", f"{base}^{{commit}}", f"{claim_base}^{{commit}}"]
    if branch:
        names.append(f"refs/heads/{branch}")
    objects = _batch(git, names)
    head_oid, head_body = objects[0]
    base_oid, claim_base_oid = objects[1][0], objects[2][0]
    branch_head = objects[3][0] if branch else None
    if head_oid is None:
        return CommitFacts(None, None, base_oid, claim_base_oid, branch_head, False, False, ())
    near = {head_oid, *_parents(head_body)}  # the common case needs no ancestry walk
    ancestors = [oid for oid in (base_oid, claim_base_oid) if oid is not None and oid not in near]
    outside = ""
    if ancestors:
        outside = git.run("rev-list", "-n", "1", *ancestors, f"^{head_oid}", "--").stdout.strip()
    from_base = base_oid is not None and (
        base_oid in near or not outside or _is_ancestor(git, base_oid, head_oid)
    )
    from_claim = claim_base_oid is not None and (
        claim_base_oid in near or not outside or _is_ancestor(git, claim_base_oid, head_oid)
    )
    diff = tuple(diff_names(repo, base_oid, head_oid)) if base_oid and from_base else ()
    transient = transient_names(repo, base_oid, head_oid, diff) if base_oid and from_base else ()
    return CommitFacts(
        head_oid=head_oid,
        head_time=_committer_time(head_body),
        base_oid=base_oid,
        claim_base_oid=claim_base_oid,
        branch_head=branch_head,
        from_base=from_base,
        from_claim_base=from_claim,
        diff=diff,
        transient=transient,
    )


def transient_names(
    repo: Path, base: str, head: str, diff: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """``(path, first commit)`` for the paths some commit of ``base..head`` changed that
    the net ``diff`` does not show (one ``git log``; merges not walked), sorted by path.

    Integration judges every commit a branch brings, not only its net diff: a file
    changed and changed back still lands in the protected ref's history.
    """
    out = (
        Git(repo)
        .run(
            "log",
            "--no-merges",
            "--reverse",
            "--format=%x01%H",
            "--name-only",
            "-z",
            "--no-renames",
            f"{base}..{head}",
            "--",
        )
        .stdout
    )
    shown = set(diff)
    first: dict[str, str] = {}
    commit = ""
    for item in out.split("\0"):
        item = item.removeprefix("\n")  # the newline after a commit's header line
        if item.startswith("\x01"):
            commit = item[1:]
        elif item and item not in shown and commit:
            first.setdefault(item, commit)
    return tuple(sorted(first.items()))


def diff_names(repo: Path, base: str, head: str) -> list[str]:
    """Paths that differ between two commits, sorted; a rename is both paths."""
    out = Git(repo).run("diff-tree", "-r", "--name-only", "-z", "--no-renames", base, head, "--")
    return sorted({p for p in out.stdout.split("\0") if p})


def _resolve(git: Git, rev: str) -> str | None:
    result = git.run("rev-parse", "--verify", "--quiet", "--end-of-options", rev, check=False)
    return result.stdout.strip() if result.ok else None


def _is_ancestor(git: Git, ancestor: str, descendant: str) -> bool:
    result = git.run("merge-base", "--is-ancestor", ancestor, descendant, check=False)
    if result.returncode not in (0, 1):
        raise result.error()
    return result.returncode == 0


def _batch(git: Git, names: list[str]) -> list[tuple[str | None, bytes]]:
    """``(oid or None, object body)`` per name, through one ``cat-file --batch``."""
    safe = [n if n and not n.startswith("-") and "\n" not in n else "-invalid-" for n in names]
    raw = git.run("cat-file", "--batch", input="".join(f"{n}\n" for n in safe).encode())
    data, pos, out = raw.stdout_bytes, 0, []
    for _ in safe:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode("utf-8", "replace").split(" ")
        pos = end + 1
        if len(header) == 3 and header[1] in ("commit", "tree", "blob", "tag"):
            size = int(header[2])
            body = data[pos : pos + size]
            pos += size + 1
            out.append((header[0] if header[1] == "commit" else None, body))
        else:  # "<name> missing" / "<name> ambiguous"
            out.append((None, b""))
    return out


def _parents(body: bytes) -> list[str]:
    out: list[str] = []
    for line in body.split(b"\n"):
        if not line:
            break
        if line.startswith(b"parent "):
            out.append(line[7:].decode("ascii", "replace").strip())
    return out


def _committer_time(body: bytes) -> datetime | None:
    for line in body.split(b"\n"):
        if not line:
            break
        if line.startswith(b"committer "):
            stamp = line.rsplit(b" ", 2)[-2]
            return datetime.fromtimestamp(int(stamp), tz=UTC)
    return None
