"""The bodies of ``detente claim status`` and ``detente claim list``.

Typer-free: the parsed commands (:mod:`detente.cli.claims`) and the reads answered
without the parser (:mod:`detente.cli.fast_reads`) run these same bodies, so both print
the same documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente.cli.session import Body, Session

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["list_body", "status_body"]


def status_body(claim_id: str, *, work: bool = False, semantic: bool = False) -> Body:
    """``claim status``: a claim now, its live overlaps, lease timer, meetings, and the
    evidence completion needs (``work``/``semantic``: also read those, slower)."""

    def body(session: Session) -> None:
        from detente.cli.evidence import evidence
        from detente.cli.render import lease_timer

        include = [part for part, asked in (("work", work), ("semantic", semantic)) if asked]
        response = session.client.get_claim(claim_id, include=include)
        claim = response["claim"]
        proof = evidence(claim)
        now = session.now()
        lease = {**claim["lease"], "timer": lease_timer(claim["lease"]["expiresAt"], now)}

        def text(console: Console) -> None:
            from detente.cli import views

            views.claim_view(console, claim, now)
            views.overlaps_view(console, response.get("overlaps", []))
            if semantic:
                views.overlaps_view(console, response.get("semanticOverlaps", []))
            if response.get("work"):
                import json

                console.print(f"work: {json.dumps(response['work'])}", markup=False)
            for meeting in response.get("meetings", []):
                views.meeting_view(console, meeting)
            checks = response.get("checks")
            if checks and (checks.get("mergeCheck") or checks.get("drifted")):
                from detente.cli.claim_merge_check import render_checks

                render_checks(console, dict(checks))
            receipts = response.get("receipts")
            if receipts:
                console.print(
                    f"notices of session {receipts['sessionId']}: delivered up to "
                    f"#{receipts['deliveredUpTo']}, seen up to #{receipts['seenUpTo']}",
                    markup=False,
                )
            console.print("evidence completion will require:")
            console.print(f"  head commit    {proof['headCommit'] or '-'}")
            files = proof["changedFiles"]
            console.print(f"  changed files  {len(files)}: {', '.join(files[:10])}", markup=False)
            tests = ", ".join(t["name"] for t in proof["tests"]) or "-"
            console.print(f"  tests          {tests}", markup=False)
            if proof["apiChanges"]:
                console.print(f"  api changes    {', '.join(proof['apiChanges'])}", markup=False)
            for item in proof["missing"]:
                console.print(f"  [yellow]missing[/]: {item}")
            for entry in memory:
                console.print(
                    f"memory {entry['path']}: revision {entry['revision']} on the branch; "
                    + "; ".join(entry["notes"] or ["your worktree has it"]),
                    markup=False,
                )

        memory = _memory_state(session, claim) if claim.get("memoryImpacts") else []
        shown: dict[str, Any] = {**response, "lease": lease, "evidence": proof}
        if memory:
            shown["memory"] = memory
        if not semantic:  # not computed: an empty list would read as "no advice"
            shown.pop("semanticOverlaps", None)
        session.emit(shown, text)

    return body


def _memory_state(session: Session, claim: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The claim's memory documents: their revision on the integration branch, whether
    the claim's worktree holds that version (``behind`` until it rebases) and the
    checkouts of the branch that did not follow (``[{path, revision, worktreeState,
    notes[]}]``)."""
    import hashlib

    from detente.cli.evidence import local_worktree

    docs: dict[str, Any] = {
        d["path"]: d for d in session.client.list_documents(str(claim["repo"]))["documents"]
    }
    worktree = local_worktree(claim)
    out: list[dict[str, Any]] = []
    for path in dict.fromkeys(m["path"] for m in claim["memoryImpacts"]):
        doc: Mapping[str, Any] | None = docs.get(path)
        disk: Mapping[str, Any] = (doc or {}).get("onDisk") or {}
        if doc is None or not disk:
            continue
        notes: list[str] = []
        state = None
        if worktree is not None:
            try:
                mine: str | None = hashlib.sha256((worktree / path).read_bytes()).hexdigest()
            except OSError:
                mine = None
            state = "current" if mine == disk.get("fileHash") else "behind"
            if state == "behind":
                notes.append("your worktree is behind (rebase onto the branch to pick it up)")
        for copy in doc.get("checkouts", []):
            if copy["state"] != "current":
                notes.append(f"checkout {copy['worktree']} is {copy['state']}")
        out.append(
            {"path": path, "revision": doc["revision"], "worktreeState": state, "notes": notes}
        )
    return out


def list_body(
    *,
    status: str | None = None,
    path: str | None = None,
    agent: str | None = None,
    agent_session: str | None = None,
    repo: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Body:
    """``claim list``: claims (newest last), filtered; with ``limit``, one page."""

    def body(session: Session) -> None:
        response = session.client.list_claims(
            repo=repo,
            status=status,
            path=path,
            agent=agent,
            session=agent_session,
            limit=limit,
            cursor=cursor,
        )

        def text(console: Console) -> None:
            from detente.cli.views import claims_table

            claims_table(console, response["claims"], session.now())
            if response.get("nextCursor"):
                console.print(f"more: --cursor {response['nextCursor']}", markup=False)

        session.emit(response, text)

    return body
