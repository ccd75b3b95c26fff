"""Every mutating operation of the catalog has one outcome on ``/v1`` and in process.

The sweep carries every mutating operation the catalog declares
(:data:`~detente.operations.catalog.OPERATIONS`), with the smallest body its OpenAPI
schema accepts (a tagged union: its first kind), over ``/v1`` and the in-process
transport as the owner of the claim it names, another claimer and the no-role principal,
and as a local process on the served store (the CLI without ``--server``): with no
``[local] roles`` it is refused as the no-role principal is, with ``roles = ["claim"]``
it has another claimer's outcome.
The MCP tools carry a subset of the catalog (:data:`parity_table.MCP_CARRIES`), which the
table of ``test_surface_parity.py`` runs on every surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from parity_world import ACTORS, World, served

from detente.errors import DetenteError
from detente.operations.catalog import OPERATIONS

from support import minimal_instance

# An exhaustive sweep: it runs in the slow stage (python -m pytest -m slow).
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


# ---------------------------------------------------------------------------- the catalog

#: Operations a principal holding ``claim`` may call with no claim of its own (the
#: catalog sweep runs them as the no-role principal only; the table above has their
#: owner/other cases).
CLAIM_SUFFICES = frozenset(
    {
        "open_claim",
        "takeover",
        "register_agent",
        "readiness",
        "register_document",
        "render",
        "reconcile",
        "pre_receive",
        "pre_commit",
        "check_edit",
        "reconcile_intents",
        "discard_patch",  # needs a patch of alice's
        "acquire_resource",  # a slot of one's own
        "declare_resource",  # a new resource (expectedRevision 0)
        "next_number",
    }
)


@dataclass(frozen=True)
class CatalogCall:
    """One mutating operation of the catalog with a minimal valid body."""

    op: Any
    names: tuple[str, ...]
    body: Any

    def filled(self, ids: dict[str, str]) -> tuple[dict[str, str], Any]:
        """Its path parameters and body naming the claim and meeting of ``ids``."""
        values = {
            "proposal_id": "prp_none",
            "patch_id": "pat_none",
            "env": "staging",
            "name": ids["resource"],
            **ids,
        }
        body = self.body
        if isinstance(body, dict) and "claimId" in body:
            body = {**body, "claimId": ids["claim_id"]}
        if self.op.name in ("renew_resource", "release_resource"):
            body = {**body, "fencingToken": int(ids["token"])}  # alice's grant
        return {n: values[n] for n in self.names}, body


def _catalog_calls(world: World) -> list[CatalogCall]:
    """Every mutating operation the catalog declares with a handler, with the smallest
    body the OpenAPI document (derived from the catalog) accepts."""
    spec = httpx.get(f"{world.base}/openapi.json", timeout=15).json()
    components = spec.get("components", {}).get("schemas", {})
    out = []
    for op in OPERATIONS:
        if not op.writes or op.handler is None:
            continue
        declared = spec["paths"][op.path][op.method.lower()]
        body = None
        if "requestBody" in declared:
            schema = declared["requestBody"]["content"]["application/json"]["schema"]
            body = minimal_instance(schema, components)
        if isinstance(body, dict) and body.get("patch") == {}:
            body["patch"] = {"body": "x"}  # exactly one of body or diff
        names = tuple(part[1:-1] for part in op.path.split("/") if part.startswith("{"))
        out.append(CatalogCall(op, names, body))
    return out


def catalog_outcome(
    world: World, surface: str, who: str, call: CatalogCall, ids: dict[str, str]
) -> str:
    """``ok`` or the error code of carrying ``call`` over ``surface``'s transport."""
    path, body = call.filled(ids)
    try:
        with world.client(surface, who) as client:
            client._call(call.op, path=path, body=body)
    except DetenteError as exc:
        return exc.code
    return "ok"


#: The transports each actor is compared on: the local process (the CLI without
#: ``--server``) on the served store is the no-role principal without ``[local] roles``,
#: and another claimer with ``roles = ["claim"]``.
SURFACES_OF = {
    "alice": ("v1", "inprocess"),
    "bob": ("v1", "inprocess", "local+claim"),
    "mallory": ("v1", "inprocess", "local"),
}


def _fresh(world: World) -> dict[str, str]:
    """A claim of alice's, a meeting carol's overlapping claim opened with it, and an
    agent session alice registered."""
    world.abandon_live()
    shared = world.path()
    alice = world.open("alice", shared)["claim"]
    carol = world.open("carol", shared)
    resource = f"res-{next(world.paths)}"
    with world.client("inprocess", "alice") as client:
        grant = client.acquire_resource(resource, {"repo": "demo", "ttlSeconds": 600})["grant"]
    with world.client("v1", "alice") as client:
        client.register_agent({"sessionId": "alice-s1", "agentName": "alice", "ttlSeconds": 600})
    return {
        "claim_id": alice["id"],
        "meeting_id": carol["meeting"]["id"],
        "resource": resource,
        "token": str(grant["fencingToken"]),
        "session_id": "alice-s1",
    }


async def test_every_mutating_operation_of_the_catalog_has_the_same_outcome_on_v1_and_in_process(
    tmp_path: Path, repo: Path
) -> None:
    """Each operation with its minimal body, as the owner of the claim it names, another
    claimer and the no-role principal: one outcome on both transports; the no-role
    principal (and the other claimer, beyond what ``claim`` allows) is forbidden."""
    async with served(tmp_path, repo, {}) as world:
        calls = _catalog_calls(world)
        ids = _fresh(world)
        failures = []
        for call in calls:
            name = call.op.name
            for who in ACTORS:
                outcomes = {}
                for surface in SURFACES_OF[who]:
                    before = world.head()
                    outcomes[surface] = got = catalog_outcome(world, surface, who, call, ids)
                    if world.head() != before:
                        if got != "ok":
                            failures.append(f"{name} by {who} on {surface}: {got} but wrote")
                        ids = _fresh(world)  # the next call meets the same state
                refused = who == "mallory" or (who == "bob" and name not in CLAIM_SUFFICES)
                if refused and set(outcomes.values()) != {"forbidden"}:
                    failures.append(f"{name} by {who}: {outcomes}, not forbidden")
                elif len(set(outcomes.values())) != 1:
                    failures.append(f"{name} by {who}: {outcomes}")
    assert len(calls) >= 30, "the catalog declares at least 30 mutating operations"
    assert failures == [], "\n".join(failures)
