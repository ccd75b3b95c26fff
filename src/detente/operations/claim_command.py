"""A claim seed (the camelCase ``POST /v1/claims`` body) as the domain command: the one
mapping from the seed's fields to :class:`~detente.domain.claims.commands.OpenClaim`.

:meth:`ClaimIn.to_command <detente.operations.bodies.ClaimIn.to_command>` hands it the
body pydantic validated; the local CLI hands it the seed it built from its typed options
(:meth:`~detente.client.inprocess.InProcessClient.open_typed_claim`), which needs no
request model: importing pydantic and building the models costs a command-line process
about 0.15 s. The decision (:func:`~detente.domain.claims.opening.announce`) checks
every value either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from detente.domain.claims.commands import ContractSeed, OpenClaim
from detente.domain.claims.declared import WIRE_NAMES, declared_from_wire
from detente.domain.claims.model import Agent, MemoryImpact
from detente.errors import ValidationError

__all__ = ["SEED_FIELDS", "open_command"]

#: The fields of a seed that opens a claim (``takeoverOf`` excepted: a takeover is
#: validated by its request model).
SEED_FIELDS = frozenset(
    {
        "repo",
        "objective",
        "baseCommit",
        "branch",
        "worktree",
        "paths",
        "modules",
        "symbols",
        "expectedContractChanges",
        "testResponsibility",
        "leaseTtlSeconds",
        "memoryImpacts",
        "agent",
        "advisory",
        "draft",
        "createWorktree",
    }
    | WIRE_NAMES
)


def open_command(seed: Mapping[str, Any]) -> OpenClaim:
    """The :class:`OpenClaim` a seed asks for (``agent`` defaults to ``anonymous``; the
    decision refuses a missing ``baseCommit``).

    Raises:
        ValidationError: ``validation_error`` for a field no seed has.
    """
    unknown = sorted(set(seed) - SEED_FIELDS)
    if unknown:
        raise ValidationError(f"{unknown[0]}: extra inputs are not permitted", field=unknown[0])
    agent = seed.get("agent") or {"id": "anonymous", "name": "anonymous"}
    tests = seed.get("testResponsibility") or ()
    return OpenClaim(
        repo=seed["repo"],
        objective=seed["objective"],
        base_commit=seed.get("baseCommit") or "",
        agent=Agent(id=agent["id"], name=agent["name"], session_id=agent.get("sessionId")),
        lease_ttl_seconds=seed.get("leaseTtlSeconds", 300),
        paths=tuple(seed.get("paths") or ()),
        modules=tuple(seed.get("modules") or ()),
        symbols=tuple(seed.get("symbols") or ()),
        expected_contract_changes=tuple(
            _contract(c) for c in seed.get("expectedContractChanges") or ()
        ),
        test_responsibility=dict(tests) if isinstance(tests, Mapping) else tuple(tests),
        declared=declared_from_wire(seed),
        memory_impacts=tuple(
            MemoryImpact(
                path=m["path"], mode=m.get("mode", "section"), sections=tuple(m.get("sections", ()))
            )
            for m in seed.get("memoryImpacts") or ()
        ),
        branch=seed.get("branch"),
        worktree=seed.get("worktree"),
        advisory=bool(seed.get("advisory", False)),
        draft=bool(seed.get("draft", False)),
        create_worktree=bool(seed.get("createWorktree", False)),
    )


def _contract(item: str | Mapping[str, Any]) -> ContractSeed:
    if isinstance(item, str):
        return item
    return {"type": item.get("type"), "area": item["area"], "change": item.get("change")}
