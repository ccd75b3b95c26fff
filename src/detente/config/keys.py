"""Every key a ``detente.toml`` may set: its section, type, range and command-line flag.

One table, read by the loader (validation), ``detente config show`` (the listing) and
``detente serve`` (the override flags), so a key is described once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from detente.config.model import LIMITED_ACTIONS, ROLE_NAMES
from detente.domain.policy import APPROVAL_GATES

__all__ = [
    "ALL_KEYS",
    "GENERATED_KEYS",
    "HARNESS_KEYS",
    "LIMIT_KEYS",
    "LOCAL_KEYS",
    "POLICY_KEYS",
    "ROLE_KEYS",
    "Key",
]

_DAY = 24 * 3600

Kind = Literal["int", "patterns", "choices", "choice", "entries", "artifacts"]


@dataclass(frozen=True)
class Key:
    """One configurable value.

    Attributes:
        section: the TOML table, dotted for a nested one (``limits.claim-open``).
        name: the key inside the table (kebab-case).
        kind: ``int`` (an integer in ``low..high``), ``patterns`` (claim path patterns),
            ``choices`` (distinct names out of ``choices``), ``choice`` (one name out of
            ``choices``) or ``entries`` (principal
            names, ``group:NAME`` or ``*``).
        low: the smallest integer accepted (``int`` only).
        high: the largest integer accepted (``int`` only).
        choices: the names accepted (``choices`` only).
        attr: the :class:`~detente.domain.policy.Policy` attribute (``[policy]`` only).
        flag: the ``detente serve`` flag overriding it, if any.
        help: one sentence for ``--help`` and the documentation.
    """

    section: str
    name: str
    kind: Kind
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    attr: str = ""
    flag: str | None = None
    help: str = ""

    @property
    def dotted(self) -> str:
        """``section.name``, the key's name in errors, sources and ``config show``."""
        return f"{self.section}.{self.name}"

    def expected(self) -> str:
        """What the key accepts, in words (for error messages)."""
        if self.kind == "int":
            return f"an integer from {self.low} to {self.high}"
        if self.kind == "patterns":
            return "an array of path patterns (strings)"
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.kind == "choices":
            return "an array of distinct names out of " + ", ".join(self.choices)
        if self.kind == "artifacts":
            return "an array of tables, each {path = PATTERN, inputs = [PATTERN, ...]}"
        return 'an array of principal names, "group:NAME" or "*"'


POLICY_KEYS = (
    Key(
        "policy",
        "lease-checkpoint-seconds",
        "int",
        1,
        _DAY,
        attr="lease_checkpoint_seconds",
        flag="--lease-checkpoint",
        help="Seconds a renewal may wait before a lease.checkpoint event names it in the log.",
    ),
    Key(
        "policy",
        "meeting-deadline-seconds",
        "int",
        1,
        30 * _DAY,
        attr="meeting_deadline_seconds",
        flag="--meeting-deadline",
        help="Seconds an overlap meeting may stay open before it escalates to a human.",
    ),
    Key(
        "policy",
        "takeover-grace-seconds",
        "int",
        0,
        7 * _DAY,
        attr="takeover_grace_seconds",
        flag="--takeover-grace",
        help="Seconds after a lease expires before another agent may take the claim over.",
    ),
    Key(
        "policy",
        "min-ttl-seconds",
        "int",
        1,
        365 * _DAY,
        attr="min_ttl_seconds",
        flag="--min-ttl",
        help="Shortest lease TTL accepted, in seconds.",
    ),
    Key(
        "policy",
        "max-ttl-seconds",
        "int",
        1,
        365 * _DAY,
        attr="max_ttl_seconds",
        flag="--max-ttl",
        help="Longest lease TTL accepted, in seconds.",
    ),
    Key(
        "policy",
        "takeover-quorum",
        "int",
        1,
        100,
        attr="takeover_quorum",
        help="CODEOWNERS owners whose approvals release a gated takeover (one human suffices).",
    ),
    Key(
        "policy",
        "approval-gates",
        "choices",
        choices=APPROVAL_GATES,
        attr="approval_gates",
        help="What makes a takeover wait for approval: the predecessor's contract changes, "
        "memory impacts, or migration files.",
    ),
    Key(
        "policy",
        "migration-patterns",
        "patterns",
        attr="migration_patterns",
        help="Path patterns of database migrations (the migrations approval gate).",
    ),
    Key(
        "policy",
        "max-targets",
        "int",
        1,
        100_000,
        attr="max_targets",
        help="Most path, module or symbol targets in one request.",
    ),
    Key(
        "policy",
        "max-text",
        "int",
        1,
        1_000_000,
        attr="max_text",
        help="Longest free text (objective, notes) accepted, in characters.",
    ),
)

GENERATED_KEYS = (
    Key(
        "generated",
        "patterns",
        "patterns",
        help="Path patterns of generated artifacts: they create no overlap.",
    ),
    Key(
        "generated",
        "artifacts",
        "artifacts",
        help="First-class generated artifacts ([[generated.artifacts]] path, inputs): "
        "writes to one are judged on its generator inputs.",
    ),
)

ROLE_KEYS = tuple(
    Key("roles", role, "entries", help=f"Who holds the {role} role.") for role in ROLE_NAMES
)

LIMIT_KEYS = tuple(
    key
    for action in LIMITED_ACTIONS
    for key in (
        Key(
            f"limits.{action}",
            "per-principal",
            "int",
            1,
            1_000_000,
            help=f"Most {action} requests per principal within the window.",
        ),
        Key(
            f"limits.{action}",
            "per-session",
            "int",
            1,
            1_000_000,
            help=f"Most {action} requests per agent session within the window.",
        ),
        Key(
            f"limits.{action}",
            "window-seconds",
            "int",
            1,
            _DAY,
            help=f"The {action} rate limit's window, in seconds.",
        ),
    )
)

LOCAL_KEYS = (
    Key(
        "local",
        "roles",
        "choices",
        choices=ROLE_NAMES,
        help="Roles of the local principal (the CLI and `detente mcp` without --server) on a "
        "store served with authentication; none by default: it may only read there.",
    ),
)

HARNESS_KEYS = (
    Key(
        "harness",
        "unclaimed",
        "choice",
        choices=("advise", "auto-claim", "require"),
        help="An agent harness's edit of a file no claim holds: allow with advice, add it to "
        "the session's claim, or refuse until claimed (detente init, docs/harnesses.md).",
    ),
    Key(
        "harness",
        "failure",
        "choice",
        choices=("open", "closed"),
        help="When the harness hooks cannot reach detente: allow the edit and say so (open), "
        "or refuse it (closed).",
    ),
)

ALL_KEYS = POLICY_KEYS + GENERATED_KEYS + ROLE_KEYS + LOCAL_KEYS + HARNESS_KEYS + LIMIT_KEYS
