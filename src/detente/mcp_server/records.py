"""Protocol tools on shared records: meetings, memory sections, the event log.

Writes name the revision they expect, like the claim tools (:mod:`.protocol`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from detente.errors import DetenteError, InvalidTransition, ValidationError
from detente.mcp_server.shapes import claim_brief, event_brief, meeting_brief, prune
from detente.mcp_server.toolkit import ToolContext
from detente.operations.resolution_bodies import ResolutionIn

__all__ = ["register"]

ClaimId = Annotated[str, Field(description="The claim's id (claimId).")]


@contextlib.contextmanager
def memory_served() -> Iterator[None]:
    """Around a memory call: a server without the memory routes (an older version)
    answers a bare 404/405, not a problem document; say so in the tools' terms."""
    try:
        yield
    except DetenteError as exc:
        if getattr(exc, "status", None) in (404, 405) and not exc.extra:
            raise InvalidTransition(
                "unavailable",
                "patched",
                "this detente server does not serve memory documents (an older version): "
                "edit the section in your worktree under your claim and list it in your "
                "evidence",
            ) from None
        raise


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add the meeting, memory and event tools to ``mcp``."""

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
            meetings = ctx.client.list_meetings(repo=ctx.client.repo_name, status=wanted)
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
            ResolutionIn | None,
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
            if resolution is not None:
                result = ctx.client.propose(
                    meeting_id,
                    expected_meeting_revision=expected_meeting_revision,
                    claim_id=claim_id,
                    resolution=resolution.to_domain().to_wire(),
                )
            else:
                assert proposal_id is not None
                result = ctx.client.accept_proposal(
                    meeting_id,
                    proposal_id,
                    expected_meeting_revision=expected_meeting_revision,
                    claim_id=claim_id,
                )
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
    def meeting_open(
        claim_id: Annotated[str, Field(description="Your claim (the one asking).")],
        expected_claim_revision: Annotated[
            int, Field(description="Your claim's revision as you last read it.")
        ],
        with_claim_id: Annotated[
            str, Field(description="The claim your potential overlap is with.")
        ],
        reason: Annotated[str | None, Field(description="Why (recorded).")] = None,
    ) -> CallToolResult:
        """Open a meeting over a 'potential' overlap (two globs that meet only in paths
        that do not exist yet: both claims stay active, and neither may create those
        paths until a resolution assigns them). Settle it with meeting_resolve."""

        def call() -> dict[str, Any]:
            result = ctx.client.request_meeting(
                claim_id,
                expected_claim_revision=expected_claim_revision,
                with_claim_id=with_claim_id,
                reason=reason,
            )
            meeting = meeting_brief(result["meeting"])
            return prune(
                {
                    "meetingId": meeting.get("meetingId"),
                    "status": meeting.get("status"),
                    "revision": meeting.get("revision"),
                    "next": "propose a resolution with meeting_resolve",
                    "claims": [claim_brief(c) for c in result.get("claims", [])],
                }
            )

        return ctx.run("meeting_open", None, [], call)

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
            str | None,
            Field(
                description="Your worktree, recorded with the write (the write itself is a "
                "commit on the integration branch; your worktree gets it when you rebase)."
            ),
        ] = None,
    ) -> CallToolResult:
        """Replace one section of a shared memory document (AGENTS.md, CLAUDE.md...)
        under your claim, naming the revisions you read; detente commits it on the
        integration branch (never commit the file yourself). revision_conflict or
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
            with memory_served():
                result = ctx.client.patch_section(request)
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
            with memory_served():
                [document] = ctx.client.list_documents(repo, path)["documents"]
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
            page = ctx.client.events(since=since, limit=limit, repo=ctx.client.repo_name)
            return {
                "nextSince": page["nextSince"],
                "events": [event_brief(e) for e in page["events"]],
            }

        return ctx.run("events_since", None, [], call)
