"""The body of a new claim, built in one place, and the short forms it is built from.

Every surface that opens a claim builds its ``POST /v1/claims`` body here: the CLI's
``claim open`` and ``claim takeover``, the demo, the MCP ``claim_open`` tool and the
advisory ``claim_files`` tool. The CLI's ``--memory``/``--contract`` options and the MCP
tools take the same short forms; :func:`memory_impacts` and :func:`contract_seed` are
their one parser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from detente.domain.claims.declared import (
    NO_FACTS,
    Declared,
    DeclaredRecord,
    declared_from_wire,
    declared_to_wire,
)

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["ClaimSeed", "claim_seed", "contract_seed", "memory_impacts", "successor_seed"]

#: An expected contract change as a seed gives it: a plain area or ``{type, area, change}``.
ContractSeed = str | Mapping[str, Any]
#: A test responsibility: test names, or ``{kind: [names]}``.
TestSeed = Sequence[str] | Mapping[str, Sequence[str]]


class _Agent(TypedDict, total=False):
    id: str
    name: str
    sessionId: str


class ClaimSeed(DeclaredRecord, total=False):
    """The ``POST /v1/claims`` body (:class:`~detente.operations.bodies.ClaimIn`'s
    members, camelCase); a member left out takes the body model's default. The declared
    facts (:class:`~detente.domain.claims.declared.DeclaredRecord`) are always present,
    None when not declared."""

    repo: str
    objective: str
    baseCommit: str
    branch: str
    worktree: str
    createWorktree: bool
    paths: list[str]
    modules: list[str]
    symbols: list[str]
    expectedContractChanges: list[str | dict[str, Any]]
    testResponsibility: list[str] | dict[str, list[str]]
    memoryImpacts: list[dict[str, Any]]
    leaseTtlSeconds: int
    agent: _Agent
    advisory: bool
    draft: bool


def claim_seed(
    *,
    repo: str,
    objective: str,
    agent: str,
    base_commit: str | None = None,
    session: str | None = None,
    paths: Iterable[str] = (),
    modules: Iterable[str] = (),
    symbols: Iterable[str] = (),
    contracts: Iterable[ContractSeed] = (),
    tests: TestSeed = (),
    declared: Declared = NO_FACTS,
    memory: Iterable[str] = (),
    impacts: Iterable[Mapping[str, Any]] = (),
    ttl: int = 300,
    branch: str | None = None,
    worktree: str | None = None,
    create_worktree: bool = False,
    advisory: bool = False,
    draft: bool = False,
) -> ClaimSeed:
    """The body of a new claim; empty and unset members are left out (the body model's
    defaults).

    Args:
        repo: the repository's name.
        objective: what the claim will achieve.
        agent: the agent's id and display name.
        base_commit: an OID or a ref (the service resolves it); None only when taking
            over (the successor keeps the predecessor's base).
        session: the agent's session id.
        paths: path patterns; modules, symbols: the other targets.
        contracts: expected contract changes, already parsed (:func:`contract_seed`).
        tests: test names or ``{kind: [names]}``.
        declared: the optional facts it declares (the deployment environment, ...).
        memory: ``PATH`` or ``PATH#section`` short forms (:func:`memory_impacts`).
        impacts: memory impacts already in the wire's shape (a predecessor's), after
            those of ``memory``.
        ttl: the lease TTL in seconds.
        branch, worktree: the claim's workspace (absolute worktree path).
        create_worktree: ask the service to create the branch and worktree.
        advisory: an advisory file lease (MCP ``claim_files``).
        draft: record a draft only (no lease, no overlap check until announced).
    """
    # mypy's extra checks want every optional member spelled beside a ``**`` item; the
    # declared facts are the record's required members, the rest are added below.
    seed: ClaimSeed = {"repo": repo, "objective": objective, **declared_to_wire(declared)}  # type: ignore[typeddict-item]
    if base_commit is not None:
        seed["baseCommit"] = base_commit
    if branch is not None:
        seed["branch"] = branch
    if worktree is not None:
        seed["worktree"] = worktree
    if create_worktree:
        seed["createWorktree"] = True
    if listed_paths := list(paths):
        seed["paths"] = listed_paths
    if listed_modules := list(modules):
        seed["modules"] = listed_modules
    if listed_symbols := list(symbols):
        seed["symbols"] = listed_symbols
    if listed_contracts := [c if isinstance(c, str) else dict(c) for c in contracts]:
        seed["expectedContractChanges"] = listed_contracts
    if isinstance(tests, Mapping):
        if tests:
            seed["testResponsibility"] = {k: [str(n) for n in v] for k, v in tests.items()}
    elif listed_tests := [str(t) for t in tests]:
        seed["testResponsibility"] = listed_tests
    if listed_impacts := [*memory_impacts(memory), *(dict(m) for m in impacts)]:
        seed["memoryImpacts"] = listed_impacts
    seed["leaseTtlSeconds"] = ttl
    seed["agent"] = {"id": agent, "name": agent}
    if session is not None:
        seed["agent"]["sessionId"] = session
    if advisory:
        seed["advisory"] = True
    if draft:
        seed["draft"] = True
    return seed


def successor_seed(
    pred: wire.Claim,
    *,
    objective: str | None = None,
    paths: Iterable[str] = (),
    agent: str,
    session: str | None = None,
    ttl: int = 300,
    create_worktree: bool = False,
    worktree: str | None = None,
) -> ClaimSeed:
    """The body that takes ``pred`` over: its declared intent (modules, symbols, contract
    changes, tests, deployment, memory impacts) carried over, its objective unless
    ``objective`` replaces it; ``paths`` narrows what is taken (empty: every path)."""
    return claim_seed(
        repo=pred["repo"],
        objective=objective or pred["objective"],
        agent=agent,
        session=session,
        paths=paths,
        modules=pred["modules"],
        symbols=pred["symbols"],
        contracts=pred["expectedContractChanges"],
        tests=pred["testResponsibility"],
        declared=declared_from_wire(pred),
        impacts=pred["memoryImpacts"],
        ttl=ttl,
        create_worktree=create_worktree,
        worktree=worktree,
    )


def contract_seed(text: str) -> str | dict[str, str]:
    """``TYPE:AREA:CHANGE`` as ``{type, area, change}`` (``TYPE:AREA`` gives no change; a
    text without ``:`` is a plain area). Overlap compares areas."""
    parts = [p.strip() for p in text.split(":", 2)]
    if len(parts) == 1:
        return parts[0]
    seed = {"type": parts[0], "area": parts[1]}
    if len(parts) == 3 and parts[2]:
        seed["change"] = parts[2]
    return seed


def memory_impacts(entries: Iterable[str]) -> list[dict[str, Any]]:
    """``['AGENTS.md#build', 'AGENTS.md#test', 'NOTES.md']`` as the API's memory impacts.

    An entry is ``PATH`` (the whole file) or ``PATH#section``; entries naming the same path
    are merged into one impact, its sections in first-seen order without repeats.

    Returns:
        ``[{path, sections[]}]`` in first-seen order of the paths.
    """
    by_path: dict[str, list[str]] = {}
    for entry in entries:
        path, _, section = entry.partition("#")
        sections = by_path.setdefault(path, [])
        if section and section not in sections:
            sections.append(section)
    return [{"path": path, "sections": sections} for path, sections in by_path.items()]
