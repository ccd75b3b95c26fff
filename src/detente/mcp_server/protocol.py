"""The protocol tools, mirroring the CLI: claims, meetings, memory sections, events.

Unlike the advisory tools these carry authority, so every write names the revision it
expects; a mismatch is a tool error with ``code: revision_conflict`` whose data holds
``expected``, ``actual`` and the ``current`` record: read it, decide again, retry.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from detente.errors import ValidationError
from detente.mcp_server.shapes import (
    claim_brief,
    claim_detail,
    event_brief,
    meeting_brief,
    overlap_brief,
    prune,
)
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]

ClaimId = Annotated[str, Field(description="The claim's id (claimId).")]
ClaimRevision = Annotated[
    int,
    Field(
        description="The claim's revision you last read (claim_status). A stale value is "
        "refused with revision_conflict carrying the current record."
    ),
]


def _next_for(claim: dict[str, Any], meeting: dict[str, Any] | None) -> str:
    status = claim.get("status")
    lease = claim.get("lease") or {}
    if status == "negotiating":
        where = f" in meeting {meeting['id']}" if meeting else ""
        return (
            f"blocking overlap: do not edit the contested targets; negotiate{where} "
            "(meeting_list, meeting_resolve)"
        )
    if status == "active":
        return (
            f"edit within your targets; claim_renew with expected_claim_revision="
            f"{claim.get('revision')} and expected_lease_revision={lease.get('revision')} "
            "before expiresAt"
        )
    return f"the claim is {status}"


def _with_overlaps(result: dict[str, Any]) -> dict[str, Any]:
    claim = result["claim"]
    meeting = result.get("meeting")
    return prune(
        {
            **claim_brief(claim),
            "meetingId": meeting.get("id") if meeting else None,
            "next": _next_for(claim, meeting),
            "overlaps": [overlap_brief(o) for o in result.get("overlaps", [])],
        }
    )


def _memory_impacts(memory: list[str]) -> list[dict[str, Any]]:
    """``['AGENTS.md#build', 'AGENTS.md#test', 'NOTES.md']`` as API memory impacts."""
    by_path: dict[str, list[str]] = {}
    for item in memory:
        path, _, section = item.partition("#")
        sections = by_path.setdefault(path, [])
        if section and section not in sections:
            sections.append(section)
    return [{"path": path, "sections": sections} for path, sections in by_path.items()]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add the protocol tools to ``mcp``."""

    @mcp.tool()
    def claim_open(
        objective: Annotated[str, Field(description="What the claim will achieve.")],
        paths: Annotated[
            list[str] | None, Field(description="Repo-relative paths or globs you will change.")
        ] = None,
        modules: Annotated[list[str] | None, Field(description="Modules you will change.")] = None,
        symbols: Annotated[list[str] | None, Field(description="Symbols you will change.")] = None,
        ttl_secs: Annotated[
            int, Field(ge=1, le=604800, description="Lease length in seconds; renew before.")
        ] = 900,
        session_id: Annotated[
            str | None, Field(description="Your session id (register_agent_work).")
        ] = None,
        agent_name: Annotated[str | None, Field(description="Your name.")] = None,
        base_commit: Annotated[
            str, Field(description="Commit your work starts from (OID or ref).")
        ] = "HEAD",
        branch: Annotated[str | None, Field(description="Your topic branch.")] = None,
        worktree: Annotated[str | None, Field(description="Your worktree directory.")] = None,
        expected_contract_changes: Annotated[
            list[str] | None, Field(description="API/contract areas you will change.")
        ] = None,
        memory: Annotated[
            list[str] | None,
            Field(
                description="Memory sections you will patch: 'AGENTS.md#build' (one section) "
                "or 'AGENTS.md' (the whole file)."
            ),
        ] = None,
        repo: Annotated[
            str | None, Field(description="Repository; only when several are served.")
        ] = None,
    ) -> CallToolResult:
        """Open a protocol claim: authority over targets (paths, modules, symbols) with a
        lease and a fencing token, for work others must not overwrite. Status 'active'
        means granted; 'negotiating' means a blocking overlap with another claim: do not
        edit the contested targets, negotiate in the meeting (meetingId). Keep claimId,
        revision and leaseRevision: later writes need them. For a plain 'I am editing
        these files' signal, prefer claim_files."""

        def call() -> dict[str, Any]:
            name = agent_name or "agent"
            opened = ctx.backend.open_claim(
                prune(
                    {
                        "repo": ctx.repo_for(session_id, repo),
                        "objective": objective,
                        "baseCommit": base_commit,
                        "paths": paths,
                        "modules": modules,
                        "symbols": symbols,
                        "expectedContractChanges": expected_contract_changes,
                        "memoryImpacts": _memory_impacts(memory or []),
                        "leaseTtlSeconds": ttl_secs,
                        "branch": branch,
                        "worktree": worktree,
                        "agent": prune({"id": name, "name": name, "sessionId": session_id}),
                    }
                )
            )
            return _with_overlaps(opened)

        scope = [*(paths or []), *(modules or []), *(symbols or []), *(memory or [])]
        return ctx.run("claim_open", session_id, scope, call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def claim_status(claim_id: ClaimId) -> CallToolResult:
        """Read a claim now: status, revision and leaseRevision (what writes must name),
        lease deadline, targets, overlaps recomputed now and its meetings. Call it before
        a write, and after any revision_conflict."""

        def call() -> dict[str, Any]:
            view = ctx.backend.get_claim(claim_id)
            claim = view["claim"]
            open_meetings = [m for m in view.get("meetings", []) if m.get("status") == "open"]
            return prune(
                {
                    **claim_detail(claim),
                    "next": _next_for(claim, open_meetings[-1] if open_meetings else None),
                    "overlaps": [overlap_brief(o) for o in view.get("overlaps", [])],
                    "meetings": [meeting_brief(m) for m in view.get("meetings", [])],
                }
            )

        return ctx.run("claim_status", None, [], call)

    @mcp.tool()
    def claim_renew(
        claim_id: ClaimId,
        expected_claim_revision: ClaimRevision,
        expected_lease_revision: Annotated[
            int, Field(description="The lease revision you last read (leaseRevision).")
        ],
        ttl_secs: Annotated[
            int, Field(ge=1, le=604800, description="New lease length from now, in seconds.")
        ] = 900,
    ) -> CallToolResult:
        """Heartbeat: extend the claim's lease to now + ttl_secs. Only the lease changes.
        Fails with lease_expired once the deadline passed (the claim is then frozen:
        open a new one) and with revision_conflict when a revision is stale."""

        def call() -> dict[str, Any]:
            body = {
                "expectedClaimRevision": expected_claim_revision,
                "expectedLeaseRevision": expected_lease_revision,
                "ttlSeconds": ttl_secs,
            }
            claim = ctx.backend.renew(claim_id, body)["claim"]
            return prune({**claim_brief(claim), "next": _next_for(claim, None)})

        return ctx.run("claim_renew", None, [], call)

    @mcp.tool()
    def claim_scope_add(
        claim_id: ClaimId,
        expected_claim_revision: ClaimRevision,
        paths: Annotated[list[str] | None, Field(description="Paths or globs to add.")] = None,
        modules: Annotated[list[str] | None, Field(description="Modules to add.")] = None,
        symbols: Annotated[list[str] | None, Field(description="Symbols to add.")] = None,
        reason: Annotated[str | None, Field(description="Why the scope grows.")] = None,
    ) -> CallToolResult:
        """Add targets to your claim before touching them. New targets that overlap
        another claim wait in pendingPaths while the claim negotiates (status
        'negotiating', meetingId); targets already granted keep their authority."""

        def call() -> dict[str, Any]:
            body = prune(
                {
                    "expectedClaimRevision": expected_claim_revision,
                    "addPaths": paths,
                    "addModules": modules,
                    "addSymbols": symbols,
                    "reason": reason,
                }
            )
            return _with_overlaps(ctx.backend.scope_change(claim_id, body))

        scope = [*(paths or []), *(modules or []), *(symbols or [])]
        return ctx.run("claim_scope_add", None, scope, call)

    @mcp.tool()
    def claim_complete(
        claim_id: ClaimId,
        expected_claim_revision: ClaimRevision,
        evidence: Annotated[
            dict[str, Any],
            Field(
                description="{headCommit, changedFiles[], tests[{name, status, exitCode}], "
                "apiChanges[], migrations[], unresolvedRisks[], memoryUpdates[]}"
            ),
        ],
        base_ref: Annotated[
            str | None, Field(description="Ref to advance, e.g. refs/heads/main.")
        ] = None,
        base_oid: Annotated[str | None, Field(description="OID you expect base_ref at.")] = None,
    ) -> CallToolResult:
        """Finish a claim with evidence (head commit, changed files, test results...). The
        server validates it and advances base_ref from base_oid to headCommit
        (fast-forward only). Errors: evidence_rejected (fix each failure), stale_base
        (rebase onto 'actual'), invalid_transition when completion is not available."""

        def call() -> dict[str, Any]:
            body: dict[str, Any] = {
                "expectedClaimRevision": expected_claim_revision,
                "evidence": evidence,
            }
            if base_ref is not None or base_oid is not None:
                body["expectedBaseRef"] = {"ref": base_ref, "oid": base_oid}
            claim = ctx.backend.complete(claim_id, body)["claim"]
            return claim_brief(claim)

        return ctx.run("claim_complete", None, [], call)

    @mcp.tool()
    def claim_abandon(
        claim_id: ClaimId,
        expected_claim_revision: ClaimRevision,
        head_commit: Annotated[
            str | None, Field(description="Last commit of your work, for a successor.")
        ] = None,
        reason: Annotated[str | None, Field(description="Why you stop.")] = None,
    ) -> CallToolResult:
        """Give up a claim explicitly (its targets are released at once), recording your
        head commit and reason so someone can continue the work."""

        def call() -> dict[str, Any]:
            body = prune(
                {
                    "expectedClaimRevision": expected_claim_revision,
                    "headCommit": head_commit,
                    "reason": reason,
                }
            )
            return claim_brief(ctx.backend.abandon(claim_id, body)["claim"])

        return ctx.run("claim_abandon", None, [], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def meeting_list(
        status: Annotated[
            str | None, Field(description="open (default), resolved, escalated, or 'all'.")
        ] = "open",
    ) -> CallToolResult:
        """Meetings opened by blocking overlaps between claims: participants, contested
        targets, proposals, deadline and the resolution options. Call it when a claim is
        'negotiating'."""

        def call() -> dict[str, Any]:
            wanted = None if status in (None, "all") else status
            meetings = ctx.backend.list_meetings(repo=ctx.backend.default_repo, status=wanted)
            return {"meetings": [meeting_brief(m) for m in meetings["meetings"]]}

        return ctx.run("meeting_list", None, [], call)

    @mcp.tool()
    def meeting_resolve(
        meeting_id: Annotated[str, Field(description="The meeting's id.")],
        expected_meeting_revision: Annotated[
            int, Field(description="The meeting revision you last read (meeting_list).")
        ],
        claim_id: Annotated[str, Field(description="Your claim in the meeting.")],
        resolution: Annotated[
            dict[str, Any] | None,
            Field(
                description="Propose: {type: split_ownership, assignments[{claimId, "
                "targets[]}]} | {type: serialize, first, then} | {type: handoff, "
                "fromClaimId, toClaimId} | {type: joint, claimIds[]} | "
                "{type: human_arbitration}"
            ),
        ] = None,
        proposal_id: Annotated[
            str | None, Field(description="Accept this proposal instead of proposing.")
        ] = None,
    ) -> CallToolResult:
        """Settle a meeting on behalf of your claim: propose a typed resolution, or accept
        another participant's proposal (proposal_id). It takes effect once every affected
        participant accepted. Give exactly one of resolution or proposal_id."""

        def call() -> dict[str, Any]:
            if (resolution is None) == (proposal_id is None):
                raise ValidationError(
                    "give exactly one of resolution (to propose) or proposal_id (to accept)",
                    field="resolution",
                )
            body = {"expectedMeetingRevision": expected_meeting_revision, "claimId": claim_id}
            if resolution is not None:
                result = ctx.backend.propose(meeting_id, {**body, "resolution": resolution})
            else:
                assert proposal_id is not None
                result = ctx.backend.accept(meeting_id, proposal_id, body)
            meeting = meeting_brief(result["meeting"])
            settled = meeting.get("status") != "open"
            return prune(
                {
                    "meetingId": meeting.get("meetingId"),
                    "status": meeting.get("status"),
                    "revision": meeting.get("revision"),
                    "next": "continue under your claim's new status"
                    if settled
                    else "wait for the other affected participants to accept",
                    "resolution": meeting.get("resolution"),
                    "proposals": meeting.get("proposals"),
                    "claims": [claim_brief(c) for c in result.get("claims", [])],
                }
            )

        return ctx.run("meeting_resolve", None, [], call)

    @mcp.tool()
    def memory_patch_section(
        path: Annotated[str, Field(description="Memory document, e.g. AGENTS.md.")],
        section_key: Annotated[str, Field(description="Section slug ('## Build' -> build).")],
        expected_section_revision: Annotated[
            int, Field(description="Section revision you last read.")
        ],
        expected_file_hash: Annotated[str, Field(description="File hash you last read.")],
        claim_id: ClaimId,
        fencing_token: Annotated[int, Field(description="Your claim's fencingToken.")],
        body: Annotated[str, Field(description="The section's new body.")],
        worktree: Annotated[
            str | None, Field(description="Write the file in this worktree.")
        ] = None,
    ) -> CallToolResult:
        """Replace one section of a shared memory document (AGENTS.md, CLAUDE.md...)
        under your claim, naming the revisions you read. revision_conflict or
        stale_fencing_token means someone wrote first: re-read and merge."""

        def call() -> dict[str, Any]:
            request = prune(
                {
                    "repo": ctx.repo_for(None),
                    "path": path,
                    "sectionKey": section_key,
                    "expectedSectionRevision": expected_section_revision,
                    "expectedFileHash": expected_file_hash,
                    "claimId": claim_id,
                    "fencingToken": fencing_token,
                    "worktree": worktree,
                    "patch": {"body": body},
                }
            )
            result = ctx.backend.patch_memory_section(request)
            document, section = result["document"], result["section"]
            return prune(
                {
                    "path": document.get("path"),
                    "sectionKey": section.get("key"),
                    "sectionRevision": section.get("revision"),
                    "fileHash": document.get("fileHash"),
                    "merged": result.get("merged") or None,
                    "next": "name sectionRevision and fileHash in your next patch",
                }
            )

        return ctx.run("memory_patch_section", None, [path], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def memory_sections(
        path: Annotated[str, Field(description="Memory document, e.g. AGENTS.md.")],
    ) -> CallToolResult:
        """Read a memory document's sections before patching one: the file hash and each
        section's key, revision and owning claim (what memory_patch_section must name)."""

        def call() -> dict[str, Any]:
            repo = ctx.repo_for(None)
            [document] = ctx.backend.list_documents(repo=repo, path=path)["documents"]
            return prune(
                {
                    "path": document.get("path"),
                    "class": document.get("class"),
                    "revision": document.get("revision"),
                    "fileHash": document.get("fileHash"),
                    "sections": [
                        prune(
                            {
                                "key": s.get("key"),
                                "title": s.get("title"),
                                "revision": s.get("revision"),
                                "ownerClaimId": s.get("ownerClaimId"),
                            }
                        )
                        for s in document.get("sections", [])
                    ],
                }
            )

        return ctx.run("memory_sections", None, [path], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def events_since(
        since: Annotated[
            int, Field(ge=0, description="Last sequence you saw (nextSince); 0 = start.")
        ] = 0,
        limit: Annotated[int, Field(ge=1, le=500, description="Max events.")] = 50,
    ) -> CallToolResult:
        """What happened in the coordination log after 'since': claims opened, renewed,
        expired, abandoned, meetings, agent registrations. Pass nextSince back to page.
        Events are hints: read the record (claim_status) before acting on one."""

        def call() -> dict[str, Any]:
            page = ctx.backend.events(since=since, limit=limit, repo=ctx.backend.default_repo)
            return {
                "nextSince": page["nextSince"],
                "events": [event_brief(e) for e in page["events"]],
            }

        return ctx.run("events_since", None, [], call)
