"""The one error hierarchy of detente, with stable codes.

Every error a caller can see is a :class:`DetenteError` carrying a stable ``code``.
Each edge maps codes in one table: HTTP status (``api/problems.py``), CLI exit code
(``cli/render.py``). The tree::

    DetenteError (code varies)
    +-- ValidationError          validation_error      malformed input; ``field`` names it
    +-- NotFoundError            not_found             unknown id
    +-- Unauthenticated          unauthenticated       auth enabled and no/invalid credentials
    +-- IssuerUnavailable        issuer_unavailable    the OIDC issuer cannot be read (503)
    +-- ForbiddenError           forbidden             principal may not act on the record
    +-- RateLimited              rate_limited          too many actions in the window (429)
    +-- ConflictError            (409 family)
    |   +-- RevisionConflict     revision_conflict     expected revision != actual; carries current
    |   +-- StaleBase            stale_base            expected ref OID / base commit not current
    |   +-- LeaseExpired         lease_expired         heartbeat/mutation after the deadline
    |   +-- InvalidTransition    invalid_transition    state machine forbids from -> to
    |   +-- OverlapBlocking      overlap_blocking      target contested by another live claim
    |   +-- StaleFencingToken    stale_fencing_token   older token than the current holder's
    |   +-- EvidenceRejected     evidence_rejected     evidence fails validation; lists failures
    |   +-- OutOfScope           out_of_scope          a write outside the claim's granted targets
    |   +-- BranchInUse          branch_in_use         a branch is checked out by another worktree
    |   +-- ResourceBusy         resource_busy         a shared resource has no free slot (no wait)
    +-- VcsError                 vcs_error             git failed for a reason we do not model
    +-- StoreError               store_unavailable     the storage backend failed
    +-- StartupFailed            startup_failed        a server process could not start (CLI only)

Errors never wrap foreign exceptions in their public fields: adapters translate
``sqlite3``/git errors into these at the boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class DetenteError(Exception):
    """Base of every detente error.

    Attributes:
        code: stable machine-readable code (see the module docstring).
        detail: one human sentence.
        extra: additional problem fields (camelCase keys), e.g. ``current``.
    """

    code = "error"

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}

    def to_problem(self) -> dict[str, Any]:
        """The error as the body fields of an RFC 9457 problem (without status/type)."""
        body: dict[str, Any] = {"code": self.code, "detail": self.detail}
        body.update(self.extra)
        return body


class ValidationError(DetenteError):
    """Malformed input. ``field`` names the offending field (dotted path)."""

    code = "validation_error"

    def __init__(self, detail: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(detail, field=field, **extra)
        self.field = field


class NotFoundError(DetenteError):
    code = "not_found"


class Unauthenticated(DetenteError):
    """Authentication is enabled and the request's credentials are missing or invalid.

    ``challenge`` is the ``WWW-Authenticate`` value the HTTP edge answers with.
    """

    code = "unauthenticated"

    def __init__(self, detail: str, *, challenge: str = "Bearer", **extra: Any) -> None:
        super().__init__(detail, **extra)
        self.challenge = challenge


class IssuerUnavailable(DetenteError):
    """The OIDC issuer's discovery document or key set cannot be fetched or read.

    Not the caller's fault: its token may well be valid (HTTP ``503``, retry later).
    ``retry_after`` is the number of seconds before a retry is worth it.
    """

    code = "issuer_unavailable"

    def __init__(self, detail: str, *, retry_after: int = 5, **extra: Any) -> None:
        super().__init__(detail, retryAfterSeconds=retry_after, **extra)
        self.retry_after = retry_after


class ForbiddenError(DetenteError):
    """The authenticated principal lacks the role, or does not own the record."""

    code = "forbidden"


class RateLimited(DetenteError):
    """Too many limited actions (claim opens, agent registrations) within the window.

    ``retry_after`` is the number of seconds until one more is allowed (HTTP
    ``Retry-After``).
    """

    code = "rate_limited"

    def __init__(self, detail: str, *, retry_after: int, **extra: Any) -> None:
        super().__init__(detail, retryAfterSeconds=retry_after, **extra)
        self.retry_after = retry_after


class ConflictError(DetenteError):
    """A 409: the request is well-formed but current state refuses it."""

    code = "conflict"


class RevisionConflict(ConflictError):
    """Expected revision does not match. Carries ``current``, ``expected``, ``actual``.

    ``expected`` and ``actual`` are what differs: revisions (int), or, when the revisions
    agree and a file changed under them, the file hashes (hex SHA-256 strings).
    """

    code = "revision_conflict"

    def __init__(
        self,
        detail: str,
        *,
        expected: int | str,
        actual: int | str,
        current: Mapping[str, Any] | None = None,
        event_ids: Sequence[str] = (),
    ) -> None:
        super().__init__(
            detail, expected=expected, actual=actual, current=current, eventIds=list(event_ids)
        )
        self.expected = expected
        self.actual = actual


class StaleBase(ConflictError):
    """Expected ref OID / base commit is not current; ``actual`` is the current OID."""

    code = "stale_base"


class LeaseExpired(ConflictError):
    code = "lease_expired"


class InvalidTransition(ConflictError):
    """The state machine forbids ``from_status -> to_status``."""

    code = "invalid_transition"

    def __init__(self, from_status: str, to_status: str, detail: str | None = None, **extra: Any):
        super().__init__(
            detail or f"a claim in status {from_status!r} cannot move to {to_status!r}",
            **{"from": from_status, "to": to_status},
            **extra,
        )
        self.from_status = from_status
        self.to_status = to_status


class OverlapBlocking(ConflictError):
    code = "overlap_blocking"


class OutOfScope(ConflictError):
    """A write outside the writing claim's granted targets (and no other claim holds it)."""

    code = "out_of_scope"


class StaleFencingToken(ConflictError):
    code = "stale_fencing_token"


class EvidenceRejected(ConflictError):
    """Evidence failed validation; ``failures`` lists every reason."""

    code = "evidence_rejected"

    def __init__(self, failures: Sequence[str], **extra: Any) -> None:
        super().__init__(
            "evidence rejected: " + "; ".join(failures), failures=list(failures), **extra
        )
        self.failures = list(failures)


class BranchInUse(ConflictError):
    """The branch is checked out in another worktree; ``holder`` is that worktree's path."""

    code = "branch_in_use"


class ResourceBusy(ConflictError):
    """Every slot of a shared resource is held (and the caller did not ask to wait);
    ``current`` is the resource's record (its holders and their deadlines)."""

    code = "resource_busy"


class VcsError(DetenteError):
    code = "vcs_error"


class StoreError(DetenteError):
    code = "store_unavailable"


class StartupFailed(DetenteError):
    """A server (``detente serve``, the demo's) could not start; ``detail`` names the cause:
    the innermost exception its start-up raised, e.g. ``ModuleNotFoundError: No module
    named 'numpy'``. Raised in the process that runs the server, never sent over HTTP.
    """

    code = "startup_failed"

    @classmethod
    def caused_by(cls, exc: BaseException | None, what: str = "the server") -> StartupFailed:
        """The error for a start-up of ``what`` that raised ``exc`` (None: it stopped
        without one)."""
        if exc is None:
            return cls(f"{what} did not start (its start-up stopped without an error)")
        cause = innermost(exc)
        return cls(
            f"{what} did not start: {type(cause).__name__}: {cause}",
            cause=type(cause).__name__,
        )


def innermost(exc: BaseException) -> BaseException:
    """The exception that started ``exc``: the first leaf of an exception group, followed
    through explicit causes (``raise ... from``)."""
    while True:
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            return exc


class ConcurrencyError(StoreError):
    """Raised by a store when an append's expected stream revision lost a race.

    Services retry or translate it to :class:`RevisionConflict`; it never reaches a client.
    ``remembered`` is True when the transaction started from the head the store's own
    last commit left, not from a head it read: another server had appended since, which
    says nothing about the race a retry (reading the head) runs.
    """

    code = "store_concurrency"
    remembered = False
