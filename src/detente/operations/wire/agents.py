"""Agent sessions and readiness (API.md "Agents and readiness")."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from detente.operations.wire.record import ClaimStatus, Json, Time, record

__all__ = [
    "AgentList",
    "AgentOut",
    "AgentSession",
    "KeyList",
    "KeyOut",
    "KeyRecord",
    "Notice",
    "OverlappingClaim",
    "Readiness",
    "Receipts",
    "SessionNotices",
]


@record
class Receipts(TypedDict):
    """How far a session's notices went: ``deliveredUpTo`` (put before the agent by a
    hook) and ``seenUpTo`` (the agent acted after them), global sequence numbers."""

    deliveredUpTo: int
    seenUpTo: int


@record
class AgentSession(TypedDict):
    """A registered agent session; ``status`` by the server's clock at read time;
    ``claimIds``: its claims whose lease runs; ``principal``: who registered it (only it,
    or an admin, renews it)."""

    sessionId: str
    agentName: str
    status: Literal["active", "departed"]
    intent: str
    branch: str | None
    worktree: str | None
    ttlSeconds: int
    expiresAt: Time
    repo: str
    revision: int
    registeredAt: Time
    updatedAt: Time
    lastEventId: str | None
    principal: str
    claimIds: list[str]
    notices: Receipts


@record
class Notice(TypedDict):
    """A wake-up: the event (``seq``, ``type``) that concerns the session's claim
    ``claimId`` (``meetingId`` for a room change; ``claimId`` null for a shared
    resource's slot the session itself waited for); ``turn``: it may proceed now."""

    seq: int
    type: str
    claimId: str | None
    meetingId: str | None
    turn: bool
    text: str


@record
class SessionNotices(TypedDict):
    """``GET /v1/agents/{sessionId}/notices``: the session's notices, the log position
    read up to, and its receipts (None: never registered)."""

    notices: list[Notice]
    scannedUpTo: int
    receipts: Receipts | None


@record
class AgentOut(TypedDict):
    """``{agent}``."""

    agent: AgentSession


@record
class AgentList(TypedDict):
    """``{agents[]}``."""

    agents: list[AgentSession]


@record
class OverlappingClaim(TypedDict):
    """Another session's claim that covers some of the asked paths."""

    claimId: str
    sessionId: str | None
    agentName: str
    paths: list[str]
    witness: str | None
    status: ClaimStatus
    reason: str


@record
class Readiness(TypedDict):
    """``ready`` when no other session's claim covers the paths, else ``caution``;
    *(added)* ``advisories`` (only when there are any, and then ``caution``): the
    session's own live claims whose work drifted outside their scope or predicts a merge
    conflict, ``{claimId, drifted[], conflicts[{against, files[]}]}``."""

    readiness: Literal["ready", "caution"]
    overlappingClaims: list[OverlappingClaim]
    advisories: NotRequired[list[dict[str, Json]]]


@record
class KeyRecord(TypedDict):
    """A registered agent key: its principal is ``key:<name>``."""

    name: str
    publicKey: str
    fingerprint: str
    roles: list[str]


@record
class KeyOut(TypedDict):
    """``{principal}``: the key registered or removed."""

    principal: KeyRecord


@record
class KeyList(TypedDict):
    """``{principals[]}``."""

    principals: list[KeyRecord]
