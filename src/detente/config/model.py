"""What a ``detente.toml`` configures, once validated: policy, generated patterns, roles, limits.

Plain frozen records with no IO; :mod:`detente.config.load` builds them. Every value
remembers where it came from (:attr:`ProjectConfig.sources`): ``default``, the file's
name (``detente.toml``), or the command-line flag that overrode it (``--max-ttl``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detente.domain.overlap.trees import Artifact
from detente.domain.policy import DEFAULT_POLICY, Policy

__all__ = [
    "DEFAULT_SOURCE",
    "EVERYONE",
    "LIMITED_ACTIONS",
    "ROLE_NAMES",
    "ProjectConfig",
    "RateLimit",
    "Roles",
]

#: The source of a value nobody set.
DEFAULT_SOURCE = "default"

#: The roles ``[roles]`` grants (issue #15): opening and working claims, integrating,
#: deploying, deciding meetings as a human (arbitration), and acting on anyone's records.
ROLE_NAMES = ("claim", "integrate", "deploy", "arbitrate", "admin", "read")

#: A ``[roles]`` entry matching every authenticated principal.
EVERYONE = "*"

#: The actions ``[limits]`` can rate-limit.
LIMITED_ACTIONS = ("claim-open", "agent-register")


@dataclass(frozen=True)
class Roles:
    """Who holds which role: each role's entries are principal names, ``group:NAME`` or ``*``.

    Without a ``[roles]`` table every authenticated principal may ``claim`` and nobody
    holds another role. ``admin`` does not imply the other roles here: whoever enforces
    roles decides what ``admin`` may override.

    Attributes:
        grants: role name (one of :data:`ROLE_NAMES`) -> its entries, in file order.
    """

    grants: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {r: ((EVERYONE,) if r == "claim" else ()) for r in ROLE_NAMES}
    )

    def members(self, role: str) -> tuple[str, ...]:
        """The entries of ``role`` (empty for a role nobody holds or an unknown name)."""
        return self.grants.get(role, ())

    def allows(self, role: str, principal: str, groups: Iterable[str] = ()) -> bool:
        """Whether ``principal`` (a member of ``groups``) holds ``role``.

        Args:
            role: one of :data:`ROLE_NAMES`.
            principal: the authenticated principal's name.
            groups: the groups the principal belongs to (names without ``group:``).

        Returns:
            True when the role lists ``*``, the principal, or one of its groups.
        """
        entries = self.members(role)
        if EVERYONE in entries or principal in entries:
            return True
        return any(f"group:{g}" in entries for g in groups)


@dataclass(frozen=True)
class RateLimit:
    """How often one action may happen within a sliding window.

    Attributes:
        per_principal: most actions per principal within the window; None: unlimited.
        per_session: most actions per agent session within the window; None: unlimited.
        window_seconds: the window's length, in seconds.
    """

    per_principal: int | None = None
    per_session: int | None = None
    window_seconds: int = 60


def _default_limits() -> Mapping[str, RateLimit]:
    return {action: RateLimit() for action in LIMITED_ACTIONS}


@dataclass(frozen=True)
class ProjectConfig:
    """The effective configuration of a repository (defaults, ``detente.toml``, flags).

    Attributes:
        policy: the service's limits (TTL bounds, meeting deadline, takeover grace,
            approval gates, ...).
        generated: canonical path patterns of generated artifacts (``[generated]``).
        artifacts: first-class generated artifacts with their generator inputs
            (``[[generated.artifacts]]``).
        roles: who holds which role (``[roles]``).
        local_roles: the roles of the local principal (the CLI and ``detente mcp``
            without ``--server``) on a store that a server with authentication serves
            (``[local] roles``; names out of :data:`ROLE_NAMES`). Empty by default: there
            the local principal may read but not change anything. On a store never served
            with authentication the local principal holds every role, as before.
        harness: the agent harness hooks' policy (``[harness]``): ``unclaimed`` (advise,
            auto-claim or require) and ``failure`` (open or closed).
        limits: action (one of :data:`LIMITED_ACTIONS`) -> its rate limit (``[limits]``).
        file: the configuration file read; None when there was none.
        sources: dotted key (``policy.max-ttl-seconds``) -> where its value came from:
            ``default``, the file's name, or a flag (``--max-ttl``).
    """

    policy: Policy = DEFAULT_POLICY
    generated: tuple[str, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    roles: Roles = field(default_factory=Roles)
    local_roles: tuple[str, ...] = ()
    harness: Mapping[str, str] = field(
        default_factory=lambda: {"unclaimed": "advise", "failure": "open"}
    )
    limits: Mapping[str, RateLimit] = field(default_factory=_default_limits)
    file: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def source(self, key: str) -> str:
        """Where the value of the dotted ``key`` came from (``default`` when never set)."""
        return self.sources.get(key, DEFAULT_SOURCE)

    def to_wire(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON document ``detente config show --json`` prints.

        Args:
            values: dotted key -> effective value (see :func:`detente.config.effective`).

        Returns:
            ``{"file": path | null, "settings": [{"key", "value", "source"}, ...]}``,
            settings in the order of ``values``.
        """
        return {
            "file": None if self.file is None else str(self.file),
            "settings": [
                {"key": key, "value": value, "source": self.source(key)}
                for key, value in values.items()
            ],
        }
