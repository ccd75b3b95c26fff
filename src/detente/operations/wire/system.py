"""Repositories, health, the audit and the event log (API.md "Repositories", "Events")."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from detente.operations.wire.record import Json, Time, record

__all__ = ["Audit", "ChainBreak", "Event", "EventPage", "Health", "Repo", "RepoList"]


@record
class Health(TypedDict):
    """Liveness: ``ok`` is false while a background task restarts or the store is slow;
    ``head`` (the last sequence) is null when the store did not answer in time."""

    ok: bool
    version: str
    head: int | None
    store: NotRequired[Literal["ok", "slow", "unavailable"]]
    tasks: NotRequired[dict[str, Json]]
    storeWatch: NotRequired[dict[str, Json]]


@record
class Repo(TypedDict):
    """A repository the server coordinates (``path``/``headOid`` null without a checkout)."""

    name: str
    path: str | None
    defaultBranch: str
    caseInsensitive: bool
    headOid: str | None


@record
class RepoList(TypedDict):
    """``{repos[]}``."""

    repos: list[Repo]


@record
class ChainBreak(TypedDict):
    """The first broken link of the hash chain."""

    seq: int
    reason: str


@record
class Audit(TypedDict):
    """The log replayed: ``ok``, the number of ``events`` and the chain's ``headHash``;
    what is wrong when not ok (``brokenAt``, ``projectionMismatches``,
    ``invariantViolations``, ``anchorViolations``: what the signed checkpoints and the
    default branches' landings contradict)."""

    ok: bool
    events: int
    headHash: str
    brokenAt: NotRequired[ChainBreak]
    projectionMismatches: NotRequired[list[str]]
    invariantViolations: NotRequired[list[str]]
    anchorViolations: NotRequired[list[str]]


@record
class Event(TypedDict):
    """An event of the hash-chained log: ``seq`` is the global commit order, ``type`` a
    stable name with its ``version``, ``data`` the type's payload."""

    seq: int
    id: str
    type: str
    version: int
    repo: str
    subject: str
    subjectRevision: int
    data: dict[str, Json]
    at: Time
    prevHash: str
    hash: str


@record
class EventPage(TypedDict):
    """``{events[], nextSince}``: ask again with ``since=nextSince`` for the next page."""

    events: list[Event]
    nextSince: int
