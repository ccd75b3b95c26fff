"""Commands, limits and the checks every decision starts with (pure, no IO).

The checks raise the stable errors of :mod:`detente.errors`: ``not_found``,
``lease_expired``, ``revision_conflict`` (with the current record and related event
ids) and ``validation_error`` (naming the field).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from detente.clock import format_time
from detente.domain.claims.model import Agent, Claim, ClaimStatus, MemoryImpact
from detente.domain.claims.wire import claim_to_wire
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.state import RepoState
from detente.errors import (
    LeaseExpired,
    NotFoundError,
    RevisionConflict,
    StaleFencingToken,
    ValidationError,
)

IdSource = Callable[[str], str]
"""Returns a fresh id for a prefix (``evt``, ``clm``, ``mtg``, ``lse``)."""

OID_PATTERN = re.compile(r"^[0-9a-f]{4,64}$")


@dataclass(frozen=True)
class Policy:
    """Tunable limits. Durations in seconds."""

    min_ttl_seconds: int = 1
    max_ttl_seconds: int = 7 * 24 * 3600
    meeting_deadline_seconds: int = 15 * 60
    max_targets: int = 1000
    max_text: int = 4000
    takeover_grace_seconds: int = 30
    takeover_quorum: int = 1
    migration_patterns: tuple[str, ...] = ("**/migrations/**", "**/*.sql")


DEFAULT_POLICY = Policy()


@dataclass(frozen=True)
class OpenClaim:
    """Seed of a new claim (API.md ``POST /v1/claims``)."""

    repo: str
    objective: str
    base_commit: str
    agent: Agent
    lease_ttl_seconds: int
    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    expected_contract_changes: tuple[str, ...] = ()
    test_responsibility: tuple[str, ...] = ()
    deployment_responsibility: str | None = None
    memory_impacts: tuple[MemoryImpact, ...] = ()
    branch: str | None = None
    worktree: str | None = None
    claim_id: str | None = None
    advisory: bool = False


@dataclass(frozen=True)
class RenewLease:
    claim_id: str
    expected_lease_revision: int
    expected_claim_revision: int
    ttl_seconds: int


@dataclass(frozen=True)
class ChangeScope:
    claim_id: str
    expected_claim_revision: int
    add_paths: tuple[str, ...] = ()
    remove_paths: tuple[str, ...] = ()
    add_modules: tuple[str, ...] = ()
    add_symbols: tuple[str, ...] = ()
    add_expected_contract_changes: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(frozen=True)
class SetStatus:
    """Suspend, resume or abandon. ``details`` carries the abandonment record."""

    claim_id: str
    expected_claim_revision: int
    to: ClaimStatus
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------- helpers


def get_claim(state: RepoState, claim_id: str) -> Claim:
    """The claim, or ``not_found``."""
    claim = state.claims.get(claim_id)
    if claim is None:
        raise NotFoundError(f"no claim {claim_id!r} in repository {state.repo!r}", claimId=claim_id)
    return claim


def check_revision(
    kind: str,
    record_id: str,
    actual: int,
    expected: int,
    current: Callable[[], dict[str, Any]],
    last_event_id: str | None,
) -> None:
    """The compare in compare-and-swap: ``revision_conflict`` unless ``expected == actual``.

    The error carries the canonical current record (``current()``, built only on a
    mismatch), ``expected``, ``actual`` and the id of the event that made it current.
    """
    if expected != actual:
        raise RevisionConflict(
            f"{kind} {record_id} is at revision {actual}, not {expected}: "
            "re-read it and decide again",
            expected=expected,
            actual=actual,
            current=current(),
            event_ids=[last_event_id] if last_event_id else [],
        )


def check_claim_revision(claim: Claim, expected: int) -> None:
    """``revision_conflict`` (with the current claim) unless ``expected`` is current."""
    check_revision(
        "claim",
        claim.id,
        claim.revision,
        expected,
        lambda: claim_to_wire(claim),
        claim.last_event_id,
    )


def check_alive(claim: Claim, now: datetime) -> None:
    """``lease_expired`` when the claim's lease has run out (or it is already expired)."""
    if claim.status is ClaimStatus.EXPIRED or (claim.leased and now >= claim.lease.expires_at):
        raise LeaseExpired(
            f"the lease of claim {claim.id} expired at {format_time(claim.lease.expires_at)}; "
            "its authority is frozen (take it over to continue the work)",
            current=claim_to_wire(claim),
            expiredAt=format_time(claim.lease.expires_at),
        )


def check_fencing(state: RepoState, claim: Claim, token: int | None) -> None:
    """Refuse a write that presents an older fencing token than the current holder's.

    A claim that was taken over is fenced off entirely: its successor holds a newer token.

    Raises:
        StaleFencingToken: ``stale_fencing_token`` with ``expected`` (the current holder's
            token) and ``actual`` (the one presented).
    """
    if claim.successor_id is not None:
        successor = state.claims.get(claim.successor_id)
        current = successor.fencing_token if successor else claim.fencing_token + 1
        raise StaleFencingToken(
            f"claim {claim.id} was taken over by {claim.successor_id} (fencing token {current}); "
            f"writes with token {token if token is not None else claim.fencing_token} are refused",
            expected=current,
            actual=token if token is not None else claim.fencing_token,
            successorId=claim.successor_id,
        )
    if token is not None and token != claim.fencing_token:
        raise StaleFencingToken(
            f"claim {claim.id} holds fencing token {claim.fencing_token}, not {token}",
            expected=claim.fencing_token,
            actual=token,
        )


def text_field(value: str, fld: str, policy: Policy, *, required: bool = True) -> str:
    """A stripped text field; refuses empty (when required), overlong and control chars.

    Control characters (terminal escapes, NUL) would reach every terminal and log that
    shows the record: they are refused, except tab and newline in free text.
    """
    value = value.strip()
    if required and not value:
        raise ValidationError(f"{fld} must not be empty", field=fld)
    if any((ord(c) < 32 and c not in "\t\n") or 127 <= ord(c) < 160 for c in value):
        raise ValidationError(f"{fld} contains a control character", field=fld)
    if len(value) > policy.max_text:
        raise ValidationError(f"{fld} is longer than {policy.max_text} characters", field=fld)
    return value


def ttl_field(ttl: int, fld: str, policy: Policy) -> int:
    if isinstance(ttl, bool) or not isinstance(ttl, int):
        raise ValidationError(f"{fld} must be an integer number of seconds", field=fld)
    if not policy.min_ttl_seconds <= ttl <= policy.max_ttl_seconds:
        raise ValidationError(
            f"{fld} must be between {policy.min_ttl_seconds} and {policy.max_ttl_seconds} "
            f"seconds, got {ttl}",
            field=fld,
        )
    return ttl


def pattern_list(state: RepoState, raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    if len(raw) > policy.max_targets:
        raise ValidationError(f"{fld} lists more than {policy.max_targets} targets", field=fld)
    out: list[str] = []
    for i, item in enumerate(raw):
        pattern = normalize_pattern(
            item, case_insensitive=state.case_insensitive, field=f"{fld}[{i}]"
        )
        if pattern not in out:
            out.append(pattern)
    return tuple(out)


def name_list(raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    out: list[str] = []
    for i, item in enumerate(raw):
        value = text_field(item, f"{fld}[{i}]", policy)
        if value not in out:
            out.append(value)
    return tuple(out)
