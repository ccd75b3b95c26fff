"""Tunable limits and the id source every decision takes (pure, no IO)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

IdSource = Callable[[str], str]
"""Returns a fresh id for a prefix (``evt``, ``clm``, ``mtg``, ``lse``)."""


OID_PATTERN = re.compile(r"^[0-9a-f]{4,64}$")

#: What a takeover's approval gate can look at: the predecessor's expected contract
#: changes, its memory impacts, and migration files among its changes.
APPROVAL_GATES = ("contracts", "memory", "migrations")


@dataclass(frozen=True)
class Policy:
    """Tunable limits. Durations in seconds.

    ``approval_gates`` lists the :data:`APPROVAL_GATES` categories that make a takeover
    wait for approval. A repository sets all of these in ``detente.toml``
    (:mod:`detente.config`).
    """

    min_ttl_seconds: int = 1
    max_ttl_seconds: int = 7 * 24 * 3600
    meeting_deadline_seconds: int = 15 * 60
    max_targets: int = 1000
    max_text: int = 4000
    takeover_grace_seconds: int = 30
    takeover_quorum: int = 1
    migration_patterns: tuple[str, ...] = ("**/migrations/**", "**/*.sql")
    approval_gates: tuple[str, ...] = APPROVAL_GATES
    #: A lease renewed by row (no event) is named in a ``lease.checkpoint`` event at most
    #: this long after its renewal; a repository writes at most one checkpoint per period.
    lease_checkpoint_seconds: int = 300

    def meeting_deadline(self, now: datetime) -> datetime:
        """When a meeting opened at ``now`` escalates to human arbitration."""
        return now + timedelta(seconds=self.meeting_deadline_seconds)


DEFAULT_POLICY = Policy()
