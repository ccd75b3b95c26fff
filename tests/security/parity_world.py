"""The world of the surface parity tests: one authenticating server over the SQLite
store of a real git repository, and a client of each surface for each principal.

``root`` sets up and cleans up; the actors are the owner (alice), another principal
holding ``claim`` (bob) and an authenticated principal with no role (mallory).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp.client.streamable_http import streamable_http_client

from api.conftest import running
from detente.client.http import HttpClient
from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.config import RateLimit, Roles
from detente.errors import DetenteError
from detente.operations.door import Operations
from detente.operations.local_principal import local_principal
from detente.runtime import default_store_url
from detente.security.authn import AuthGate
from detente.security.identity import Principal, acting_as, namespaced
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.security.ratelimit import RateLimiter
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs import resolve_commit
from mcp import Client as McpClient
from oidc_issuer import Issuer, running_issuer

from support import counting_ids

AUD = "detente-parity"
BASE = "HEAD"
AGENTS = b"# AGENTS\n\nRead me first.\n\n## Build\n\nmake\n"
#: ``root`` sets up and cleans up; the actors are the owner, another claimer, no role.
ROLES = Roles({"claim": ("alice", "bob", "carol"), "admin": ("root",)})
ACTORS = ("alice", "bob", "mallory")
SURFACES = ("v1", "mcp", "inprocess")


def make_repo(tmp_path: Path) -> Path:
    """A git repository named ``demo`` (``detente mcp --repo`` names it after its
    directory) with ``AGENTS.md`` committed on ``main``."""
    root = tmp_path / "demo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "AGENTS.md").write_bytes(AGENTS)
    for args in (["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


@dataclass(frozen=True)
class Op:
    """One operation: its setup (as the owner), its client call, its MCP tool calls."""

    name: str
    setup: Callable[[World], dict[str, Any]]
    call: Callable[[Any, dict[str, Any]], object]
    mcp: Callable[[dict[str, Any]], list[tuple[str, dict[str, Any]]]]
    #: the expected outcome by actor (alice is the owner of what the setup made)
    expected: dict[str, str]


@dataclass
class World:
    """The served app, its service, and a client of each surface for each principal."""

    service: Service
    gate: AuthGate
    base: str
    issuer: Issuer
    mcp: dict[str, McpClient] = field(default_factory=dict)
    paths: Iterator[int] = field(default_factory=itertools.count)

    def principal(self, name: str) -> Principal:
        return self.gate.with_roles(Principal(namespaced("oidc", name), "oidc"))

    def head(self) -> tuple[int, str]:
        return self.service.store.head()

    def path(self) -> str:
        return f"src/f{next(self.paths)}.py"

    # ------------------------------------------------------------------ the client surfaces

    @contextlib.contextmanager
    def client(self, surface: str, who: str) -> Iterator[Any]:
        """The detente client of ``surface`` acting as ``who``: ``v1``, ``inprocess``, or a
        local process's in-process client (the CLI's without ``--server``), which acts as
        ``local`` whoever ``who`` is: ``local`` with no ``[local] roles``, ``local+claim``
        with ``roles = ["claim"]``."""
        if surface.startswith("local"):
            granted = ("claim",) if surface == "local+claim" else ()
            local = Operations(
                self.service,
                limiter=self.gate.limiter,
                principal=functools.partial(local_principal, self.service, granted),
            )
            yield InProcessClient(self.service, repo_name="demo", operations=local)
            return
        if surface == "v1":
            headers = {"Authorization": f"Bearer {self.issuer.token(who, aud=AUD)}"}
            http = httpx.Client(base_url=self.base, headers=headers, timeout=15)
            with HttpClient(http, repo_name="demo") as client:
                yield client
            return
        operations = Operations(self.service, limiter=self.gate.limiter)
        client = InProcessClient(self.service, repo_name="demo", operations=operations)
        with acting_as(self.principal(who)):
            yield client

    def as_root(self) -> contextlib.AbstractContextManager[Any]:
        return self.client("inprocess", "root")

    def open(self, who: str, *paths: str, **extra: Any) -> dict[str, Any]:
        body = {
            "repo": "demo",
            "objective": f"{who} edits {', '.join(paths)}",
            "baseCommit": BASE,
            "paths": list(paths),
            "leaseTtlSeconds": 60,
            "agent": {"id": who, "name": who},
            **extra,
        }
        with self.client("inprocess", who) as client:
            opened: dict[str, Any] = client.open_claim(body)
        return opened

    def abandon_live(self) -> None:
        """Clean up between cases: no claim stays live to overlap the next one."""
        with self.as_root() as client:
            for claim in client.list_claims(repo="demo")["claims"]:
                if claim["status"] in ("active", "negotiating", "blocked", "suspended"):
                    current = client.get_claim(claim["id"])["claim"]
                    client.abandon(claim["id"], expected_claim_revision=current["revision"])


async def outcome_of(world: World, surface: str, who: str, op: Op, ctx: dict[str, Any]) -> str:
    """``ok`` or the error code of running ``op`` on ``surface`` as ``who``."""
    if surface == "mcp":
        client = world.mcp[who]
        for tool, arguments in op.mcp(ctx):
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                data = result.structured_content or {}
                if not data and result.content:
                    data = json.loads(result.content[0].text)  # type: ignore[union-attr]
                return str(data.get("code"))
        return "ok"
    try:
        with world.client(surface, who) as client:
            op.call(client, ctx)
    except DetenteError as exc:
        return exc.code
    return "ok"


# ---------------------------------------------------------------------------- the world


@contextlib.asynccontextmanager
async def served(tmp_path: Path, repo: Path, limits: dict[str, RateLimit]) -> AsyncIterator[World]:
    # The repository's own store (where ``detente mcp --repo`` finds it), at the real time
    # (its leases are read by that process's clock too).
    store = Path(default_store_url(repo).removeprefix("sqlite:///"))
    store.parent.mkdir(parents=True, exist_ok=True)
    clock = FakeClock(datetime.now(UTC))
    service = Service(
        SqliteStore(store),
        clock,
        [RepoConfig("demo", repo)],
        ids=counting_ids(),
        resolve_commit=resolve_commit,
    )
    with running_issuer("EdDSA") as issuer:
        gate = AuthGate(
            oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
            roles=ROLES,
            limiter=RateLimiter(limits, clock.now),
        )
        try:
            with running(service, auth=gate) as base:
                world = World(service, gate, base, issuer)
                async with contextlib.AsyncExitStack() as stack:
                    for who in ACTORS:
                        headers = {"Authorization": f"Bearer {issuer.token(who, aud=AUD)}"}
                        http = await stack.enter_async_context(
                            httpx2.AsyncClient(headers=headers, timeout=15)
                        )
                        world.mcp[who] = await stack.enter_async_context(
                            McpClient(streamable_http_client(f"{base}/mcp", http_client=http))
                        )
                    yield world
        finally:
            service.store.close()
