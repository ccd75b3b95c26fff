"""The ``edit_check`` tool: the whole judgement of an edit before it is made, in one call
(the ``check_edit`` operation, ``POST /v1/hooks/edit-check``, that the harness hooks ask
before every edit)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from detente.mcp_server.shapes import prune
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add ``edit_check`` to ``mcp``."""

    @mcp.tool()
    def edit_check(
        paths: Annotated[
            list[str],
            Field(
                min_length=1,
                description="Concrete repo-relative files you are about to write ('src/app.py').",
            ),
        ],
        session_id: Annotated[
            str | None,
            Field(description="Your session id: the claim it opened judges the edit."),
        ] = None,
        claim_id: Annotated[
            str | None, Field(description="The claim to judge under (wins over the session's).")
        ] = None,
        worktree: Annotated[
            str | None, Field(description="The top directory of the worktree you edit in.")
        ] = None,
        repo: Annotated[str | None, Field(description="The repository's name.")] = None,
    ) -> CallToolResult:
        """May you write these files now? One answer with everything to act on: decision
        allow or deny (by the same rule as the pre-commit hook), the claim you work under,
        the holders of refused files (objective, agent, lease), the meeting rooms you
        share with them, files no claim holds yet (claim them: unclaimed), and options:
        ready-to-run commands (wait, split, handoff, claim). Never changes anything."""

        def call() -> dict[str, Any]:
            answer = ctx.client.check_edit(
                ctx.repo_for(session_id, repo),
                paths,
                session_id=session_id,
                claim_id=claim_id,
                worktree=worktree,
            )
            claim = answer["claim"]
            return prune(
                {
                    "decision": answer["decision"],
                    "claimId": claim["id"] if claim else None,
                    "reasons": answer["check"]["reasons"],
                    "holders": [
                        {
                            "claimId": h["id"],
                            "agent": (h.get("agent") or {}).get("name"),
                            "objective": h["objective"],
                            "leaseExpiresAt": (h.get("lease") or {}).get("expiresAt"),
                        }
                        for h in answer["holders"]
                    ],
                    "rooms": answer["rooms"],
                    "unclaimed": answer["unclaimed"],
                    "options": answer["options"],
                }
            )

        return ctx.run("edit_check", session_id, paths, call)
