"""The advisory tools: evidence for agents, never enforcement (DESIGN principle 6).

``register_agent_work``, ``list_active_agents``, ``claim_files``, ``release_files``,
``verify_change_readiness``, ``reconcile_diff_intent``. None of them refuses an edit: a
contested path gives ``caution`` with the evidence (who, which paths, why); only
malformed input is an error (``validation_error``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from detente.client.seeds import claim_seed
from detente.domain.agents.advisory import Intent, reconcile
from detente.errors import ValidationError
from detente.ids import new_id
from detente.mcp_server.leases import release, replace_older
from detente.mcp_server.shapes import agent_brief, prune
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]

SessionId = Annotated[
    str,
    Field(
        description="Your session id from register_agent_work; reuse the same one on every call."
    ),
]
Paths = Annotated[
    list[str],
    Field(
        description="Repo-relative paths or globs with '/' separators: 'src/app.py', "
        "'docs/*.md', 'src/api/**' ('dir/' means everything under dir)."
    ),
]
AskedPaths = Annotated[
    list[str],
    Field(
        description="Repo-relative paths or globs ('src/app.py', 'src/api/**'), or one "
        "symbol of a file ('src/app.py::Retry.backoff'): a symbol meets only claims on "
        "that symbol, its class or methods, or the whole file."
    ),
]
TtlSecs = Annotated[int, Field(ge=1, le=604800, description="Lease length in seconds.")]

_READY_NEXT = "edit; call release_files when done (the claim also lapses at expiresAt)"
_CAUTION_NEXT = (
    "another session holds some of these paths (see overlappingClaims: who, which paths, "
    "why): coordinate with it or choose other files before editing; nothing is locked"
)

_ADVISORY_NEXT = (
    "your own claim's work drifted outside its scope or predicts a merge conflict (see "
    "advisories): add the drifted paths to its scope (claim_scope_add) or undo them, and "
    "talk to the claim you conflict with (meeting_list) before either of you completes"
)


class IntentIn(BaseModel):
    """One side of ``reconcile_diff_intent`` (unknown fields refused, as in every tool)."""

    model_config = ConfigDict(extra="forbid")

    session_id: str | None = Field(
        default=None, description="A registered session: its live claims' paths and symbols."
    )
    paths: list[str] | None = Field(default=None, description="Paths or globs it would touch.")
    symbols: list[str] | None = Field(
        default=None, description="Symbols it would change, e.g. 'pkg.mod.func'."
    )
    change_kind: str | None = Field(
        default=None, description="edit, rename, delete, api, schema, ..."
    )
    claim_id: str | None = Field(
        default=None, description="A claim: what it declared, or with actual=true its diff."
    )
    actual: bool = Field(
        default=False,
        description="With claim_id: compare what the claim's worktree/branch really changes.",
    )
    modules: list[str] | None = Field(default=None, description="Modules, e.g. 'pkg.sub'.")


def _others(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [prune(e) for e in entries]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add the advisory tools to ``mcp``."""

    @mcp.tool()
    def register_agent_work(
        agent_name: Annotated[
            str, Field(description="Who you are: 'claude-code', 'codex', 'cursor', a name.")
        ],
        intent: Annotated[
            str, Field(description="One sentence: what you are about to do, and where.")
        ],
        session_id: Annotated[
            str | None,
            Field(
                description="Your session id. Omit on the first call to get one; pass it "
                "again to renew (heartbeat) or to update intent/branch."
            ),
        ] = None,
        branch: Annotated[str | None, Field(description="Your git branch.")] = None,
        worktree: Annotated[str | None, Field(description="Your worktree directory.")] = None,
        ttl_secs: Annotated[
            int,
            Field(
                ge=1,
                le=604800,
                description="Seconds you count as active; re-register before expiresAt.",
            ),
        ] = 3600,
        repo: Annotated[
            str | None,
            Field(description="Repository name; only when the server coordinates several."),
        ] = None,
    ) -> CallToolResult:
        """Announce yourself to the other agents in this repository. Call it once at the
        start of a task (before reading or editing files) and again to renew before
        expiresAt or when your intent changes. Returns your sessionId (pass it as
        session_id to every other detente tool) and the other active sessions with their
        intent, so you can avoid their areas. After expiresAt you are listed as departed."""
        sid = session_id or new_id("ses")

        def call() -> dict[str, Any]:
            body = {
                "sessionId": sid,
                "agentName": agent_name,
                "intent": intent,
                "branch": branch,
                "worktree": worktree,
                "ttlSeconds": ttl_secs,
                "repo": repo or ctx.client.repo_name,
            }
            agent = ctx.client.register_agent(prune(body))["agent"]
            others = [
                agent_brief(a)
                for a in ctx.agents(agent.get("repo"))
                if a.get("sessionId") != sid and a.get("status") == "active"
            ]
            return prune(
                {
                    "sessionId": sid,
                    "status": agent.get("status"),
                    "expiresAt": agent.get("expiresAt"),
                    "next": "before editing, verify_change_readiness then claim_files",
                    "activeAgents": others,
                }
            )

        return ctx.run("register_agent_work", sid, [], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_active_agents() -> CallToolResult:
        """Who else works in this repository now: every active session with its stated
        intent, branch, worktree, deadline, last heartbeat (lastSeen) and live claim ids,
        plus departed sessions (no heartbeat before their deadline) whose claims have not
        expired. Call it before starting work in an area, or when verify_change_readiness
        says caution."""

        def call() -> dict[str, Any]:
            shown = [
                agent_brief(a)
                for a in ctx.agents(ctx.client.repo_name)
                if a.get("status") == "active" or a.get("claimIds")
            ]
            return {"agents": shown}

        return ctx.run("list_active_agents", None, [], call)

    @mcp.tool()
    def claim_files(
        session_id: SessionId,
        paths: Paths,
        reason: Annotated[
            str, Field(description="Why you will edit them; other agents read this.")
        ],
        ttl_secs: TtlSecs = 900,
        agent_name: Annotated[
            str | None,
            Field(description="Your name; default the agent_name you registered."),
        ] = None,
    ) -> CallToolResult:
        """Tell other agents you are about to edit these files (an advisory lease, backed
        by a real claim; globs allowed). Call it right before editing. It never refuses:
        readiness is 'caution' when another session already holds some of the paths, with
        who and why; then coordinate or pick other files. Claiming the same paths again
        renews them (the older claim is replaced). The lease lapses by itself at
        expiresAt; release_files ends it earlier."""

        def call() -> dict[str, Any]:
            registered = ctx.known_session(session_id, active=True)
            repo = ctx.repo_for(session_id)
            name = agent_name or registered.get("agentName") or "agent"
            opened = ctx.client.open_claim(
                claim_seed(
                    repo=repo,
                    objective=reason,
                    base_commit="HEAD",
                    agent=name,
                    session=session_id,
                    paths=paths,
                    ttl=ttl_secs,
                    advisory=True,
                )
            )
            claim = opened["claim"]
            replaced = replace_older(ctx, repo, session_id, claim)
            ready = ctx.client.readiness(session_id, paths, repo=repo)
            caution = ready["readiness"] == "caution"
            return prune(
                {
                    "claimId": claim["id"],
                    "readiness": ready["readiness"],
                    "expiresAt": claim["lease"]["expiresAt"],
                    "paths": claim["paths"],
                    "next": _CAUTION_NEXT if caution else _READY_NEXT,
                    "overlappingClaims": _others(ready["overlappingClaims"]),
                    "replaced": replaced,
                }
            )

        return ctx.run("claim_files", session_id, paths, call)

    @mcp.tool()
    def release_files(
        session_id: SessionId,
        paths: Annotated[
            list[str] | None,
            Field(
                description="What to release, as claimed ('docs/foo.md') or a glob covering "
                "claimed files ('docs/*.md'); omit to release everything you claimed."
            ),
        ] = None,
    ) -> CallToolResult:
        """Release files you claimed with claim_files, as soon as you are done with them,
        so other agents get 'ready' again at once. Claims whose every path is released are
        abandoned; others are narrowed. Only your own advisory claims are touched."""

        def call() -> dict[str, Any]:
            ctx.known_session(session_id, active=False)
            return release(ctx, session_id, paths)

        return ctx.run("release_files", session_id, paths or [], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def verify_change_readiness(session_id: SessionId, paths: AskedPaths) -> CallToolResult:
        """Before editing, ask whether these paths are free: 'ready' means no other
        session holds them; 'caution' lists each other session's claim that covers them
        (claimId, sessionId, agentName, their paths, a witness path, status, their
        reason). Advice only: it never blocks. On caution, read their reason and
        coordinate, wait, or choose other files; on ready, claim_files then edit. Your own
        claims' advisories come too: paths your work changed outside your claim's scope
        (drifted) and merge conflicts git predicts with another claim's branch."""

        def call() -> dict[str, Any]:
            ctx.known_session(session_id, active=False)
            repo = ctx.repo_for(session_id)
            ready = ctx.client.readiness(session_id, paths, repo=repo)
            caution = ready["readiness"] == "caution"
            advisories = ready.get("advisories") or []
            if advisories and not ready["overlappingClaims"]:
                after = _ADVISORY_NEXT
            else:
                after = _CAUTION_NEXT if caution else "claim_files, then edit"
            return prune(
                {
                    "readiness": ready["readiness"],
                    "next": after,
                    "overlappingClaims": _others(ready["overlappingClaims"]),
                    "advisories": advisories,
                }
            )

        return ctx.run("verify_change_readiness", session_id, paths, call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def reconcile_diff_intent(a: IntentIn, b: IntentIn) -> CallToolResult:
        """Compare two change intents and report where they meet: every pair of path
        patterns both would touch (with a witness path both match) and every symbol both
        name. Each side is a registered session (its live claims' paths and symbols)
        and/or explicit paths/symbols. Use it before splitting work with another agent,
        or when readiness says caution, to see exactly which files collide. Give a side
        claim_id (with actual=true for the claim's real diff) or modules to compare by
        symbol instead: then the answer lists the symbols both touch ('path::Class.method')
        and the blast radius (references between them, bounded, truncation stated)."""

        def call() -> dict[str, Any]:
            for label, side in (("a", a), ("b", b)):
                if side.session_id:
                    ctx.known_session(side.session_id, active=False, field=f"{label}.session_id")
            if any(side.claim_id or side.actual for side in (a, b)):
                return prune(ctx.client.reconcile_intents(_symbolic(a), _symbolic(b)))
            repo = ctx.repo_for(a.session_id or b.session_id)
            held_a, held_b = _held(ctx, repo, a), _held(ctx, repo, b)
            if any(h["symbols"] or h["modules"] for h in (held_a, held_b)):
                # The server's comparison (``detente reconcile``, POST /v1/reconcile):
                # bare names resolved, class contains method, file and module contain
                # symbol. Where it cannot read them (no checkout, a name the code does
                # not define yet), the same containment by name below.
                try:
                    return prune(
                        ctx.client.reconcile_intents(
                            _symbolic(a, held_a), _symbolic(b, held_b), repo=repo
                        )
                    )
                except ValidationError:
                    pass
            side_a = _intent(ctx, repo, a, "a", held_a)
            side_b = _intent(ctx, repo, b, "b", held_b)
            shared = [s.to_wire() for s in reconcile(side_a, side_b)]
            return prune(
                {
                    "overlap": bool(shared),
                    "next": (
                        "split the shared targets between you, or serialize the work"
                        if shared
                        else "no shared targets: both can proceed"
                    ),
                    "shared": shared,
                    "a": _side(side_a),
                    "b": _side(side_b),
                }
            )

        scope = [*(a.paths or []), *(b.paths or [])]
        return ctx.run("reconcile_diff_intent", a.session_id, scope, call)


def _symbolic(side: IntentIn, held: Mapping[str, list[str]] | None = None) -> dict[str, Any]:
    """The ``POST /v1/reconcile`` side of an MCP intent (``held``: with the targets of
    the side's session, see :func:`_held`)."""
    targets = held or {
        "paths": list(side.paths or []),
        "symbols": list(side.symbols or []),
        "modules": list(side.modules or []),
    }
    return {
        "claimId": side.claim_id,
        "actual": side.actual,
        "paths": list(targets["paths"]),
        "symbols": list(targets["symbols"]),
        "modules": list(targets["modules"]),
        "roughChangeKind": side.change_kind,
    }


def _held(ctx: ToolContext, repo: str, side: IntentIn) -> dict[str, list[str]]:
    """A side's explicit targets plus those of its session's live claims."""
    held = {
        "paths": list(side.paths or []),
        "symbols": list(side.symbols or []),
        "modules": list(side.modules or []),
    }
    if side.session_id:
        for claim in ctx.client.session_claims(side.session_id, repo=repo)["claims"]:
            held["paths"] += claim.get("paths", []) + claim.get("pendingPaths", [])
            held["symbols"] += claim.get("symbols", [])
            held["modules"] += claim.get("modules", [])
    return held


def _intent(
    ctx: ToolContext, repo: str, side: IntentIn, label: str, held: Mapping[str, list[str]]
) -> Intent:
    paths, symbols = held["paths"], held["symbols"]
    name = side.session_id or label
    if not paths and not symbols and not held["modules"]:
        raise ValidationError(
            f"{label} names no targets: give paths or symbols, or a session_id that holds claims",
            field=label,
        )
    return Intent.of(
        name,
        paths=paths,
        symbols=symbols,
        change_kind=side.change_kind,
        case_insensitive=ctx.case_insensitive(repo),
        fld=label,
    )


def _side(intent: Intent) -> dict[str, Any]:
    return prune(
        {
            "label": intent.label,
            "changeKind": intent.change_kind,
            "paths": len(intent.paths),
            "symbols": len(intent.symbols),
        }
    )
