"""The patch queue: content-addressed ``git format-patch`` artifacts of claims (pure).

A claim may hand in its work as a patch (``POST /v1/patches``) instead of, or before,
integrating it: the server stores the mbox text in the event log, content-addressed, and
lists it until it is integrated (its claim integrated) or discarded. Nothing here trusts
the client's file list: :func:`mbox_files` reads the paths from the diff headers. A
rejected edit is kept this way too (DESIGN principle 7), so publishing never checks the
files against the claim's targets.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from detente.domain import events as ev
from detente.domain.claims.guards import get_claim
from detente.domain.policy import DEFAULT_POLICY, OID_PATTERN, IdSource
from detente.domain.state import RepoState
from detente.domain.validation import text_field
from detente.errors import InvalidTransition, RevisionConflict, ValidationError

__all__ = [
    "LISTED_STATUSES",
    "MAX_PATCH_BYTES",
    "STATUSES",
    "DiscardPatch",
    "PublishPatch",
    "decide_discard",
    "decide_publish",
    "mbox_commits",
    "mbox_files",
    "patch_id",
    "patch_subject",
]

#: The largest artifact accepted, in bytes of UTF-8.
MAX_PATCH_BYTES = 8 * 1024 * 1024
#: Statuses a listing shows when no status is asked for (the queue).
LISTED_STATUSES = frozenset({"published"})
STATUSES = ("published", "integrated", "discarded")

_FROM_LINE = re.compile(r"^From ([0-9a-f]{40}|[0-9a-f]{64}) ", re.MULTILINE)
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


@dataclass(frozen=True)
class PublishPatch:
    """``POST /v1/patches``: ``claimId, baseCommit, format: mbox, mbox``."""

    claim_id: str
    base_commit: str
    mbox: str
    format: str = "mbox"


@dataclass(frozen=True)
class DiscardPatch:
    """``POST /v1/patches/{id}/discard``: ``expectedRevision, reason``."""

    patch_id: str
    expected_revision: int
    reason: str | None = None


def patch_subject(patch_id: str) -> str:
    return f"patch/{patch_id}"


def patch_id(repo: str, mbox: str) -> str:
    """``pat_`` + 24 hex digits of SHA-256 over the repository name and the content."""
    digest = hashlib.sha256(repo.encode() + b"\0" + mbox.encode("utf-8", "surrogatepass"))
    return "pat_" + digest.hexdigest()[:24]


def mbox_commits(mbox: str) -> int:
    """How many ``From <oid> ...`` message separators the mbox holds."""
    return len(_FROM_LINE.findall(mbox))


def _unquote(text: str) -> str:
    """git's C-style quoting (``"a/caf\\303\\251.py"``) back to the path."""
    if not (text.startswith('"') and text.endswith('"') and len(text) >= 2):
        return text
    raw, out, i = text[1:-1], bytearray(), 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if nxt in "0123" and i + 4 <= len(raw):
                out.append(int(raw[i + 1 : i + 4], 8))
                i += 4
                continue
            out += _ESCAPES.get(nxt, nxt).encode()
            i += 2
            continue
        out += ch.encode()
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _strip_prefix(path: str) -> str | None:
    path = _unquote(path.rstrip("\t"))
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


def _header_paths(rest: str) -> list[str]:
    """Both paths of a ``diff --git a/X b/Y`` header (when it can be split unambiguously)."""
    if rest.startswith('"'):
        end = rest.find('" ', 1)
        first, second = rest[: end + 1], rest[end + 2 :]
        return [p for p in (_strip_prefix(first), _strip_prefix(second)) if p]
    length = (len(rest) - 5) // 2
    if len(rest) == 2 * length + 5 and rest[length + 2 : length + 5] == " b/":
        return [rest[2 : 2 + length]]
    return []


def mbox_files(mbox: str) -> tuple[str, ...]:
    """Every path a ``git format-patch`` mbox changes (old and new names), sorted."""
    files: set[str] = set()
    for line in mbox.splitlines():
        if line.startswith("diff --git "):
            files.update(_header_paths(line[len("diff --git ") :]))
        elif line.startswith(("--- ", "+++ ")):
            path = _strip_prefix(line[4:])
            if path:
                files.add(path)
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            files.add(_unquote(line.split(" ", 2)[2]))
    return tuple(sorted(files))


def decide_publish(state: RepoState, cmd: PublishPatch, ids: IdSource) -> list[ev.Event]:
    """Store an artifact (idempotent: the same content in the same repository is one patch).

    Returns:
        ``[patch.published]``, or ``[]`` when the patch already exists.

    Raises:
        NotFoundError: unknown claim.
        ValidationError: ``format`` not ``mbox``, ``baseCommit`` not an OID, an empty,
            oversized or non-format-patch ``mbox``.
    """
    claim = get_claim(state, cmd.claim_id)
    if cmd.format != "mbox":
        raise ValidationError("format must be 'mbox' (git format-patch output)", field="format")
    base = cmd.base_commit.strip().lower()
    if not OID_PATTERN.match(base):
        raise ValidationError("baseCommit must be a commit object id (hex)", field="baseCommit")
    size = len(cmd.mbox.encode("utf-8", "surrogatepass"))
    if size > MAX_PATCH_BYTES:
        raise ValidationError(
            f"the patch is {size} bytes; at most {MAX_PATCH_BYTES} are accepted", field="mbox"
        )
    commits = mbox_commits(cmd.mbox)
    if commits == 0:
        raise ValidationError(
            "mbox holds no 'From <oid>' message: send `git format-patch --stdout` output",
            field="mbox",
        )
    pid = patch_id(state.repo, cmd.mbox)
    if pid in state.gates.patches:
        return []
    data: dict[str, Any] = {
        "patchId": pid,
        "claimId": claim.id,
        "baseCommit": base,
        "format": "mbox",
        "sha256": hashlib.sha256(cmd.mbox.encode("utf-8", "surrogatepass")).hexdigest(),
        "size": size,
        "files": list(mbox_files(cmd.mbox)),
        "commits": commits,
        "mbox": cmd.mbox,
    }
    return [ev.stream_event(ids, patch_subject(pid), ev.PATCH_PUBLISHED, **data)]


def decide_discard(state: RepoState, cmd: DiscardPatch, ids: IdSource) -> list[ev.Event]:
    """Take a published patch out of the queue.

    Raises:
        NotFoundError: unknown patch (raised by the caller that found no repository).
        RevisionConflict: ``expectedRevision`` is not the patch's revision.
        InvalidTransition: the patch is not ``published``.
    """
    patch = state.gates.patches[cmd.patch_id]
    reason = (
        text_field(cmd.reason, "reason", DEFAULT_POLICY, required=False) or None
        if cmd.reason is not None
        else None
    )
    if cmd.expected_revision != patch.revision:
        raise RevisionConflict(
            f"patch {patch.id} is at revision {patch.revision}, not {cmd.expected_revision}",
            expected=cmd.expected_revision,
            actual=patch.revision,
        )
    if patch.status != "published":
        raise InvalidTransition(patch.status, "discarded", f"patch {patch.id} is {patch.status}")
    return [
        ev.stream_event(
            ids,
            patch_subject(patch.id),
            ev.PATCH_DISCARDED,
            patchId=patch.id,
            claimId=patch.claim_id,
            reason=reason,
        )
    ]
