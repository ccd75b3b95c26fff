"""The shared resource tools: ``resource_acquire``, ``resource_renew``,
``resource_release``, ``resource_status`` and ``resource_next_number``.

A shared resource is something that is not a file and that several agents must not use
at once beyond its capacity (the build, a test database, a port, a deploy environment);
the counter hands out migration numbers exactly once.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from detente.mcp_server.shapes import prune
from detente.mcp_server.toolkit import ToolContext

__all__ = ["register"]

Name = Annotated[
    str, Field(description="The resource: build, db:test, port:5432, deploy:staging, ...")
]
Repo = Annotated[str | None, Field(description="A repository name (default: the only one).")]
Token = Annotated[int, Field(description="The grant's fencingToken (from resource_acquire).")]


def register(mcp: MCPServer[Any], ctx: ToolContext) -> None:
    """Add the shared resource tools to ``mcp``."""

    @mcp.tool()
    def resource_acquire(
        name: Name,
        ttl_secs: Annotated[
            int, Field(ge=1, le=604800, description="Lease length from now, in seconds.")
        ] = 300,
        wait: Annotated[
            bool,
            Field(description="When every slot is held: queue (true) instead of failing."),
        ] = False,
        capacity: Annotated[
            int | None,
            Field(ge=1, le=1000, description="Slots, when the resource is new (default 1)."),
        ] = None,
        session_id: Annotated[str | None, Field(description="Your sessionId.")] = None,
        claim_id: Annotated[str | None, Field(description="The claim it is for.")] = None,
        note: Annotated[str, Field(description="What you use it for.")] = "",
        repo: Repo = None,
    ) -> CallToolResult:
        """Take a slot of a shared resource before using it (run the build, use the test
        database, bind the port, deploy to staging). Returns 'grant' with a fencingToken
        and expiresAt: renew before expiresAt (resource_renew) and release when done.
        When every slot is held it fails with resource_busy, or with wait=true returns
        'waiting' {ticket, position}: you are granted in arrival order when a slot frees
        (a resource.granted event naming your ticket; resource_status shows it)."""

        def call() -> dict[str, Any]:
            if session_id is not None:
                ctx.known_session(session_id, active=True)
            body = {
                "repo": repo,
                "ttlSeconds": ttl_secs,
                "wait": wait,
                "capacity": capacity,
                "sessionId": session_id,
                "claimId": claim_id,
                "note": note,
            }
            return prune(dict(ctx.client.acquire_resource(name, body)))

        return ctx.run("resource_acquire", session_id, [name], call)

    @mcp.tool()
    def resource_renew(
        name: Name,
        fencing_token: Token,
        expected_lease_revision: Annotated[
            int, Field(description="The grant's leaseRevision you last read.")
        ],
        ttl_secs: Annotated[
            int, Field(ge=1, le=604800, description="New lease length from now, in seconds.")
        ] = 300,
        repo: Repo = None,
    ) -> CallToolResult:
        """Heartbeat a grant: its lease runs ttl_secs from now. Fails with lease_expired
        once the deadline passed (the slot went to someone else: acquire again), and
        stale_fencing_token when the token no longer holds a slot."""

        def call() -> dict[str, Any]:
            body = {
                "repo": repo,
                "fencingToken": fencing_token,
                "expectedLeaseRevision": expected_lease_revision,
                "ttlSeconds": ttl_secs,
            }
            return prune(dict(ctx.client.renew_resource(name, body)))

        return ctx.run("resource_renew", None, [name], call)

    @mcp.tool()
    def resource_release(
        name: Name,
        fencing_token: Annotated[
            int | None, Field(description="The grant to give back (its fencingToken).")
        ] = None,
        ticket: Annotated[
            str | None, Field(description="Or: leave the line (your waiting ticket).")
        ] = None,
        repo: Repo = None,
    ) -> CallToolResult:
        """Give a slot back as soon as you are done (the next agent in line gets it at
        once), or leave the line with your ticket."""

        def call() -> dict[str, Any]:
            body = {"repo": repo, "fencingToken": fencing_token, "ticket": ticket}
            return prune(dict(ctx.client.release_resource(name, body)))

        return ctx.run("resource_release", None, [name], call)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def resource_status(name: Name | None = None, repo: Repo = None) -> CallToolResult:
        """One shared resource (holders with their fencing tokens and deadlines, the line
        of waiters), or every resource when no name is given."""

        def call() -> dict[str, Any]:
            if name is None:
                return prune(dict(ctx.client.list_resources(repo=repo)))
            return prune(dict(ctx.client.get_resource(name, repo=repo)))

        return ctx.run("resource_status", None, [name or ""], call)

    @mcp.tool()
    def resource_next_number(
        name: Annotated[str, Field(description="The counter, e.g. migrations.")],
        at_least: Annotated[
            int | None,
            Field(ge=1, description="Start here if the counter is lower (existing files)."),
        ] = None,
        repo: Repo = None,
    ) -> CallToolResult:
        """The counter's next number, handed out exactly once (two agents never get the
        same one): name your migration with 'label' (e.g. 0042)."""

        def call() -> dict[str, Any]:
            return prune(dict(ctx.client.next_number(name, {"repo": repo, "atLeast": at_least})))

        return ctx.run("resource_next_number", None, [name], call)
