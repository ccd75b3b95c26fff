"""The ``claim_merge_check`` tool: what git predicts of a claim's branch, and its drift."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from detente.mcp_server.shapes import prune
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add ``claim_merge_check`` to ``mcp``."""

    @mcp.tool()
    def claim_merge_check(
        claim_id: Annotated[str, Field(description="The claim's id (claimId).")],
    ) -> CallToolResult:
        """After you commit on your claim's branch: merge it (git merge-tree, nothing
        checked out) with the integration branch and with the branches of the other live
        claims sharing a directory with it. A predicted conflict with another claim opens
        a meeting with the conflicting hunks, even when your declared scopes do not
        overlap: talk before either of you completes. Also lists the paths your work
        changed outside your claim's scope (drifted)."""

        def call() -> dict[str, Any]:
            checked = ctx.client.merge_check(claim_id)
            merge: dict[str, Any] = dict(checked.get("mergeCheck") or {})
            conflicts = merge.get("conflicts", [])
            return prune(
                {
                    "claimId": checked["claimId"],
                    "status": checked["status"],
                    "head": merge.get("head"),
                    "checked": merge.get("checked"),
                    "conflicts": conflicts,
                    "meetings": [
                        {"meetingId": m["id"], "participants": m["participants"]}
                        for m in checked.get("meetings", [])
                    ],
                    "drifted": checked.get("drifted"),
                    "autoClaimed": checked.get("autoClaimed"),
                    "next": (
                        "a merge conflict is predicted: read the hunks, then settle it in the "
                        "meeting (meeting_resolve) or change your edit"
                        if conflicts
                        else "every merge is clean"
                    ),
                }
            )

        return ctx.run("claim_merge_check", None, [claim_id], call)
