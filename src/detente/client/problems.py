"""Problems (RFC 9457 bodies) back into :mod:`detente.errors` exceptions.

The class is chosen by the problem's ``code`` by walking the error hierarchy, so a code
added to ``errors.py`` is mapped without touching this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente import errors

if TYPE_CHECKING:
    import httpx

__all__ = ["ServerUnavailable", "decode", "error_from_problem", "error_from_response"]


class ServerUnavailable(errors.DetenteError):
    """The server could not be reached, or answered 502/503/504 without a problem body."""

    code = "server_unavailable"


def _error_classes() -> dict[str, type[errors.DetenteError]]:
    """Every error class by its code, found by walking the hierarchy (new codes included)."""
    found: dict[str, type[errors.DetenteError]] = {}
    pending: list[type[errors.DetenteError]] = [errors.DetenteError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


_PROBLEM_ENVELOPE = frozenset({"type", "title", "status", "detail", "code"})


def error_from_problem(status: int, body: Mapping[str, Any]) -> errors.DetenteError:
    """Rebuild the detente error a problem+json body describes.

    The class is chosen by ``code`` (falling back on the HTTP status family); the
    instance keeps ``detail`` and every other problem field in ``.extra``, plus the
    convenience attributes of its class (``field``, ``expected``/``actual``,
    ``from_status``/``to_status``, ``failures``) and ``status``.

    Args:
        status: the HTTP status.
        body: the decoded problem (may be empty when the server sent no JSON).

    Returns:
        The error, not raised.
    """
    code = str(body.get("code") or "")
    cls = _error_classes().get(code) if code else None
    if cls is None:
        if status == 404:
            cls = errors.NotFoundError
        elif status in (400, 422):
            cls = errors.ValidationError
        elif status == 409:
            cls = errors.ConflictError
        elif status in (502, 503, 504):
            cls = ServerUnavailable
        else:
            cls = errors.DetenteError
    detail = str(body.get("detail") or body.get("title") or f"HTTP {status}")
    extra = {k: v for k, v in body.items() if k not in _PROBLEM_ENVELOPE}
    # The subclasses' constructors want their own arguments; the problem already holds
    # the finished fields, so build the instance through the base initialiser.
    exc = cls.__new__(cls)
    errors.DetenteError.__init__(exc, detail, **extra)
    if code and code != cls.code:
        exc.code = code
    exc.status = status  # type: ignore[attr-defined]
    if isinstance(exc, errors.ValidationError):
        exc.field = extra.get("field")
    if isinstance(exc, errors.RevisionConflict):
        exc.expected = extra.get("expected")  # type: ignore[assignment]
        exc.actual = extra.get("actual")  # type: ignore[assignment]
    if isinstance(exc, errors.InvalidTransition):
        exc.from_status = str(extra.get("from", ""))
        exc.to_status = str(extra.get("to", ""))
    if isinstance(exc, errors.EvidenceRejected):
        exc.failures = [str(f) for f in extra.get("failures", [])]
    return exc


def decode(response: httpx.Response) -> dict[str, Any]:
    """The JSON object of a 2xx response; raises the error a non-2xx one describes."""
    if response.status_code >= 300:
        raise error_from_response(response)
    body = response.json()
    if not isinstance(body, dict):
        raise errors.DetenteError(f"unexpected response body from {response.request.url}")
    return body


def error_from_response(response: httpx.Response) -> errors.DetenteError:
    """The error a non-2xx response describes (its problem body, else its status)."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    if not body.get("detail"):
        text = response.text.strip()[:200]
        body = {**body, "detail": f"HTTP {response.status_code} from the server: {text}"}
    return error_from_problem(response.status_code, body)
