"""Output of the CLI: JSON or rich text, and the one table from error code to exit code.

Exit codes (the CLI edge of the error table in ``errors.py``)::

    0  ok
    1  unexpected error (a bug, or git failed: vcs_error)
    2  usage or validation_error (bad option, bad path pattern, unknown repo, ...)
    3  not_found
    4  revision_conflict (someone else changed the record first; re-read and retry)
    5  lease_expired
    6  overlap: the claim was opened but is negotiating, not active (overlap_blocking)
    7  invalid_transition
    8  other conflict: branch_in_use, stale_base, stale_fencing_token, evidence_rejected,
       out_of_scope, resource_busy, forbidden, unauthenticated, rate_limited
    9  server or store unavailable (server_unavailable, store_unavailable,
       issuer_unavailable)

With ``--json`` every command prints one JSON document on stdout (an error as its
problem object, with the same exit code); otherwise readable text, errors on stderr.
``rich`` is imported only when text is actually printed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.errors import DetenteError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_CODES",
    "EXIT_CODES_HELP",
    "EXIT_OK",
    "EXIT_OVERLAP",
    "EXIT_UNEXPECTED",
    "Output",
    "duration",
    "exit_code_for",
    "lease_timer",
]

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_OVERLAP = 6

#: The CLI's mapping from stable error code to exit status; unknown codes exit 1.
EXIT_CODES: dict[str, int] = {
    "validation_error": EXIT_USAGE,
    "not_found": 3,
    "revision_conflict": 4,
    "lease_expired": 5,
    "overlap_blocking": EXIT_OVERLAP,
    "invalid_transition": 7,
    "branch_in_use": 8,
    "resource_busy": 8,
    "stale_base": 8,
    "stale_fencing_token": 8,
    "evidence_rejected": 8,
    "out_of_scope": 8,
    "conflict": 8,
    "forbidden": 8,
    "unauthenticated": 8,
    "rate_limited": 8,
    "store_unavailable": 9,
    "store_concurrency": 9,
    "issuer_unavailable": 9,
    "server_unavailable": 9,
}

#: The exit-code table as shown in ``detente --help``.
EXIT_CODES_HELP = """**Exit codes**: 0 ok, 1 unexpected (or vcs_error), 2 usage or validation_error,
3 not_found, 4 revision_conflict, 5 lease_expired, 6 overlap (claim opened but
negotiating), 7 invalid_transition, 8 other conflict (branch_in_use, stale_base, ...),
9 server or store unavailable.

**--json** prints one JSON document on stdout for every command, errors included."""


def exit_code_for(code: str) -> int:
    """The exit status for an error ``code`` (see the module docstring)."""
    return EXIT_CODES.get(code, EXIT_UNEXPECTED)


def lease_timer(expires_at: str, now: datetime) -> str:
    """``"expires in 4m12s (at 2026-01-01T00:05:00Z)"`` or ``"expired 3s ago (at ...)"``.

    Args:
        expires_at: the RFC 3339 deadline.
        now: the current time (timezone-aware).
    """
    from detente.clock import parse_time

    deadline = parse_time(expires_at)
    seconds = int((deadline - now).total_seconds())
    at = deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
    if seconds >= 0:
        return f"expires in {duration(seconds)} (at {at})"
    return f"expired {duration(-seconds)} ago (at {at})"


def duration(seconds: int, *, with_seconds: bool = True) -> str:
    """``seconds`` (>= 0) as ``1h02m03s``, ``2m03s`` or ``3s``; ``with_seconds=False``
    drops the seconds of a duration of an hour or more (``1h02m``)."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s" if with_seconds else f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class Output:
    """Where a command's result goes: one JSON document, or rich text.

    Args:
        json_mode: print JSON on stdout instead of text.
        verbose: add connection details (mode, server) to text output.
    """

    def __init__(self, *, json_mode: bool, verbose: bool = False) -> None:
        self.json_mode = json_mode
        self.verbose = verbose
        self._console: Console | None = None
        self._err: Console | None = None

    @property
    def console(self) -> Console:
        """The stdout console (created on first use)."""
        if self._console is None:
            self._console = _make_console(stderr=False)
        return self._console

    @property
    def err(self) -> Console:
        """The stderr console (created on first use)."""
        if self._err is None:
            self._err = _make_console(stderr=True)
        return self._err

    def emit(self, data: Mapping[str, Any], text: Callable[[Console], None]) -> None:
        """Print ``data`` as JSON, or call ``text`` with the console."""
        if self.json_mode:
            self.json(data)
        else:
            text(self.console)

    def json(self, data: Mapping[str, Any] | Sequence[Any]) -> None:
        """Print one JSON document (one line) on stdout."""
        sys.stdout.write(json.dumps(data, separators=(",", ":"), default=str) + "\n")
        sys.stdout.flush()

    def progress(self, message: str) -> None:
        """A plain progress line (no markup): stdout in text mode, stderr in JSON mode."""
        (self.err if self.json_mode else self.console).print(message, markup=False)

    def error(self, exc: DetenteError, *, context: Mapping[str, Any] | None = None) -> int:
        """Report ``exc`` and return its exit status.

        JSON mode prints the problem object (``code``, ``detail``, the error's extra
        fields, ``exitCode``) on stdout: the same keys in local and server mode (the HTTP
        ``status`` is not repeated: ``exitCode`` is the CLI's); text mode prints
        ``error[code]: detail`` and the useful extra fields on stderr.

        Args:
            exc: the error.
            context: more fields for the JSON object (e.g. a claim that was opened).
        """
        code = exit_code_for(exc.code)
        if self.json_mode:
            body = exc.to_problem()
            body["exitCode"] = code
            if context:
                body.update(context)
            self.json(body)
            return code
        from rich.markup import escape

        self.err.print(f"[bold red]{escape(f'error[{exc.code}]')}[/]: {escape(exc.detail)}")
        for key in ("field", "expected", "actual", "holder", "from", "to"):
            if key in exc.extra:
                self.err.print(f"  {key}: {escape(str(exc.extra[key]))}", highlight=False)
        current = exc.extra.get("current")
        if isinstance(current, Mapping) and "status" in current:
            self.err.print(
                f"  current: status {current.get('status')}, revision {current.get('revision')}"
                + _lease_revision(current),
                highlight=False,
            )
        for failure in exc.extra.get("failures", []) or []:
            self.err.print(f"  - {escape(str(failure))}", highlight=False)
        return code


def _lease_revision(record: Mapping[str, Any]) -> str:
    lease = record.get("lease")
    if isinstance(lease, Mapping):
        return f", lease revision {lease.get('revision')}"
    return ""


def _make_console(*, stderr: bool) -> Console:
    from rich.console import Console

    # emoji=False: user text prints as stored (a contract area "a:b:c" is not "a🅱c")
    return Console(stderr=stderr, soft_wrap=True, highlight=False, emoji=False)
