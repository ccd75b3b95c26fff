"""The index tools: ``symbols_touched`` (what a claim's work changes now, by symbol) and
``search`` (claims and memory sections ranked by meaning). Read-only advice."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from detente.mcp_server.shapes import prune
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add the index tools to ``mcp``."""

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def symbols_touched(
        claim_id: Annotated[str, Field(description="The claim whose work to read, clm_...")],
    ) -> CallToolResult:
        """The symbols (functions, classes, methods; 'path::Class.method') that a claim's
        worktree, or its branch when the worktree is gone, changes right now compared with
        its base commit, file by file; outsideScope lists touched symbols and files the
        claim does not cover. Call it before claim_complete, or when another agent asks
        what you are changing."""

        def call() -> dict[str, Any]:
            return prune(ctx.client.claim_symbols(claim_id))

        return ctx.run("symbols_touched", None, [claim_id], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search(
        query: Annotated[str, Field(description="What to look for: 'retry behaviour'.")],
        repo: Annotated[str | None, Field(description="A repository name.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="Most results.")] = 10,
    ) -> CallToolResult:
        """Find live claims and memory-file sections about a topic, ranked by meaning
        (semantic embeddings, or BM25 words when the model is absent: 'similarity.mode'
        says which). Each claim comes with its overlaps. Use it before starting work to
        see who already works on the same subsystem, even in other files."""

        def call() -> dict[str, Any]:
            return prune(ctx.client.search(query, repo=repo, limit=limit))

        return ctx.run("search", None, [query], call)
