"""The claim tools of the protocol, mirroring the CLI (meetings, memory, events: :mod:`.records`).

Unlike the advisory tools these carry authority, so every write names the revision it
expects; a mismatch is a tool error with ``code: revision_conflict`` whose data holds
``expected``, ``actual`` and the ``current`` record: read it, decide again, retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from detente.client.seeds import claim_seed
from detente.mcp_server.shapes import claim_brief, claim_detail, kept, prune, view_parts
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


def _next_for(claim: Mapping[str, Any], meeting: Mapping[str, Any] | None) -> str:
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


def _with_overlaps(result: Mapping[str, Any]) -> dict[str, Any]:
    claim = result["claim"]
    return prune(
        {
            **claim_brief(claim),
            "next": _next_for(claim, result.get("meeting")),
            **view_parts(result),
        }
    )


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
        create_worktree: Annotated[
            bool,
            Field(
                description="Have detente create the claim's branch and worktree (at "
                "base_commit; branch/worktree override the defaults). If git refuses, "
                "no claim is recorded."
            ),
        ] = False,
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
            if session_id is not None:
                registered = ctx.known_session(session_id, active=True)
                name = agent_name or registered.get("agentName") or name
            opened = ctx.client.open_claim(
                claim_seed(
                    repo=ctx.repo_for(session_id, repo),
                    objective=objective,
                    base_commit=base_commit,
                    agent=name,
                    session=session_id,
                    paths=paths or (),
                    modules=modules or (),
                    symbols=symbols or (),
                    contracts=expected_contract_changes or (),
                    memory=memory or (),
                    ttl=ttl_secs,
                    branch=branch,
                    worktree=worktree,
                    create_worktree=create_worktree,
                )
            )
            answer = _with_overlaps(opened)
            if create_worktree:  # where the work goes: the agent cds there
                answer.update(kept(opened["claim"], "branch", "worktree", "baseCommit"))
            return answer

        scope = [*(paths or []), *(modules or []), *(symbols or []), *(memory or [])]
        return ctx.run("claim_open", session_id, scope, call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def claim_status(claim_id: ClaimId) -> CallToolResult:
        """Read a claim now: status, revision and leaseRevision (what writes must name),
        lease deadline, targets, overlaps recomputed now and its meetings. Call it before
        a write, and after any revision_conflict."""

        def call() -> dict[str, Any]:
            view = ctx.client.get_claim(claim_id)
            claim = view["claim"]
            open_meetings = [m for m in view.get("meetings", []) if m.get("status") == "open"]
            return prune(
                {
                    **claim_detail(claim),
                    "next": _next_for(claim, open_meetings[-1] if open_meetings else None),
                    **view_parts(view),
                }
            )

        return ctx.run("claim_status", None, [], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def claim_check(
        claim_id: ClaimId,
        paths: Annotated[
            list[str],
            Field(
                min_length=1,
                description="Concrete repo-relative file paths to write, or one symbol of "
                "a file each (path::Qualified.name).",
            ),
        ],
    ) -> CallToolResult:
        """May this claim write these files (or symbols) now? The same answer as
        `detente claim check`, the pre-commit hook and the server (one authority rule): ok
        (limitedTo: the symbols a file held only through symbols may change), or a tool
        error with code overlap_blocking (blockers name the holders), out_of_scope (add
        the paths with a scope change), lease_expired or invalid_transition."""

        def call() -> dict[str, Any]:
            checked = ctx.client.check_writes(claim_id, paths)
            limits = checked.get("limitedTo") or {}
            return prune(
                {
                    "ok": True,
                    "claimId": checked.get("claimId", claim_id),
                    "paths": checked.get("paths", paths),
                    "limitedTo": limits,
                    "next": "edit only inside the limitedTo symbols of those files"
                    if limits
                    else "edit these paths",
                }
            )

        return ctx.run("claim_check", None, paths, call)

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
            claim = ctx.client.renew(
                claim_id,
                expected_lease_revision=expected_lease_revision,
                expected_claim_revision=expected_claim_revision,
                ttl_seconds=ttl_secs,
            )["claim"]
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
            changed = ctx.client.scope_change(
                claim_id,
                expected_claim_revision=expected_claim_revision,
                add_paths=paths or (),
                add_modules=modules or (),
                add_symbols=symbols or (),
                reason=reason,
            )
            return _with_overlaps(changed)

        scope = [*(paths or []), *(modules or []), *(symbols or [])]
        return ctx.run("claim_scope_add", None, scope, call)

    @mcp.tool()
    def claim_scope_remove(
        claim_id: ClaimId,
        expected_claim_revision: ClaimRevision,
        paths: Annotated[
            list[str] | None, Field(description="Path patterns to drop, as claimed.")
        ] = None,
        modules: Annotated[list[str] | None, Field(description="Modules to drop.")] = None,
        symbols: Annotated[
            list[str] | None,
            Field(description="Symbols to drop: path::Name as claimed, or Name if unique."),
        ] = None,
        reason: Annotated[str | None, Field(description="Why the scope shrinks.")] = None,
    ) -> CallToolResult:
        """Give up targets you no longer need, so claims waiting on them go ahead at once
        (never negotiates). A target you do not hold, or removing your last one, is a
        validation_error and changes nothing (to give up everything, abandon the claim)."""

        def call() -> dict[str, Any]:
            changed = ctx.client.scope_change(
                claim_id,
                expected_claim_revision=expected_claim_revision,
                remove_paths=paths or (),
                remove_modules=modules or (),
                remove_symbols=symbols or (),
                reason=reason,
            )
            return _with_overlaps(changed)

        scope = [*(paths or []), *(modules or []), *(symbols or [])]
        return ctx.run("claim_scope_remove", None, scope, call)

    @mcp.tool()
    def claim_complete(
        claim_id: ClaimId,
        expected_claim_revision: ClaimRevision,
        fencing_token: Annotated[int, Field(description="Your claim's fencingToken.")],
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
        (fast-forward only). Errors: evidence_rejected (fix each item of 'failures'),
        stale_base (rebase onto 'actual'), stale_fencing_token, revision_conflict, and
        validation_error when base_ref/base_oid or evidence is missing."""

        def call() -> dict[str, Any]:
            body: dict[str, Any] = {
                "expectedClaimRevision": expected_claim_revision,
                "fencingToken": fencing_token,
                "evidence": evidence,
            }
            if base_ref is not None or base_oid is not None:
                body["expectedBaseRef"] = {"ref": base_ref, "oid": base_oid}
            claim = ctx.client.complete(claim_id, body)["claim"]
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
            abandoned = ctx.client.abandon(
                claim_id,
                expected_claim_revision=expected_claim_revision,
                head_commit=head_commit,
                reason=reason,
            )
            return claim_brief(abandoned["claim"])

        return ctx.run("claim_abandon", None, [], call)
