"""Finding a person's edit of a memory document before a write is decided.

Two places hold one: the integration branch's copy, when its hash is not the recorded
one (a person committed an edit there, or a crash left a memory commit whose events never
landed), and a checkout of the branch whose file differs from its index (an edit not
committed yet). The branch's is adopted as it is; a checkout's is three-way merged onto
the branch's copy (``git merge-file``, base: the version that checkout's index holds) and
adopted when it merges, the merged bytes staged for the batch's commit and given back to
that checkout afterwards. An edit that does not merge stays in its file, untouched
(``memory show`` reports the checkout as ``edited``). Checkouts follow memory commits in
the background (:mod:`detente.service.checkout_follower`): a checkout still behind is not
an edit (its file equals its index), and a copy that looks edited is looked at again
once the queued follows ran. The decision itself is pure:
:func:`~detente.domain.memory.adoption.decide_adopt`.
"""

from __future__ import annotations

from detente.domain.events import Event
from detente.domain.memory.adoption import decide_adopt
from detente.domain.memory.markdown import digest
from detente.domain.memory.model import DocClass, MemoryDocument
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.service.memory_branch import BranchPlan, MemoryBranch
from detente.service.memory_files import merge_file
from detente.vcs.memory_follow import CheckoutCopy, checkout_copies

__all__ = ["person_edit"]


def person_edit(
    branch: MemoryBranch, state: RepoState, doc: MemoryDocument, plan: BranchPlan, ids: IdSource
) -> list[Event]:
    """The ``memory.adopted`` events of a person's edit of ``doc`` (see the module
    docstring), or nothing. Checkouts are looked at once per batch and document."""
    if doc.doc_class is DocClass.PRIVATE:
        return []
    data = plan.read(doc.path)
    if data is not None and digest(data) != doc.file_hash:
        return decide_adopt(doc, data, "branch", ids)
    if doc.path in plan.checked:  # once per batch: checkouts follow after it
        return []
    plan.checked.add(doc.path)
    # Against the tip the batch started from: the checkouts have not followed this batch's
    # own writes yet.
    tip_blob = plan.tip_blob(doc.path)
    # Asked before the checkouts are read: a follow that ends while they are read (its
    # file read before, its index after) looks like an edit too. None starts meanwhile:
    # follows are queued only by a batch, and this batch holds the lock.
    quiet = branch.settled(doc.repo)
    # While follows are queued a checkout holds one of the versions they bring it to: no
    # edit, and no git process to tell.
    following = () if quiet else branch.following(doc.repo)
    copies = checkout_copies(
        plan.root, plan.ref, {doc.path: tip_blob}, plan.oid_length, following=following
    )
    if any(c.state == "edited" for c in copies) and not quiet:
        # A follow halfway (file rewritten, index not yet) looks like an edit: look again
        # once the follows queued before this batch ran.
        branch.settle(doc.repo)
        copies = checkout_copies(plan.root, plan.ref, {doc.path: tip_blob}, plan.oid_length)
    for copy in copies:
        merged = _merged(branch, doc.repo, copy, data)
        if merged is None or copy.data is None:
            continue
        events = decide_adopt(doc, merged, f"checkout {copy.worktree}", ids)
        if events:
            plan.write(doc.path, merged, doc.revision + len(events))
            plan.adopted.append((copy.worktree, doc.path, copy.data, merged))
            return events
    return []


def _merged(branch: MemoryBranch, repo: str, copy: CheckoutCopy, tip: bytes | None) -> bytes | None:
    """The branch's copy with a checkout's edit merged in (None: no edit, or it does not
    merge)."""
    if copy.state != "edited" or copy.data is None:
        return None
    base = branch.blob_bytes(repo, copy.index_blob) if copy.index_blob else b""
    if base is None or tip is None or base == tip:
        return copy.data
    return merge_file(tip, base, copy.data)
