"""The ``claim_objective`` tool: change what a claim says it is for (semantic advice anew)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from detente.mcp_server.shapes import claim_brief, prune, view_parts
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add ``claim_objective`` to ``mcp``."""

    @mcp.tool()
    def claim_objective(
        claim_id: Annotated[str, Field(description="The claim's id (claimId).")],
        expected_claim_revision: Annotated[
            int,
            Field(
                description="The claim's revision you last read (claim_status). A stale "
                "value is refused with revision_conflict carrying the current record."
            ),
        ],
        objective: Annotated[str, Field(description="The new objective, one sentence.")],
        reason: Annotated[str | None, Field(description="Why it changed.")] = None,
    ) -> CallToolResult:
        """Change your claim's objective when the task turned out to be something else.
        Never blocks (no file changes hands); the result lists semanticOverlaps: other
        live claims whose objective now reads as the same subsystem (advice: talk to
        them before you collide)."""

        def call() -> dict[str, Any]:
            view = ctx.client.change_objective(
                claim_id,
                expected_claim_revision=expected_claim_revision,
                objective=objective,
                reason=reason,
            )
            return prune(
                {
                    **claim_brief(view["claim"]),
                    "objective": view["claim"]["objective"],
                    **view_parts(view),
                }
            )

        return ctx.run("claim_objective", None, [claim_id], call)
