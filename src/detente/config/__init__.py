"""The project configuration: ``detente.toml`` at the repository root, validated.

A repository tunes detente in one TOML file (read with :mod:`tomllib`)::

    [policy]
    meeting-deadline-seconds = 900      # an overlap meeting escalates after 15 minutes
    takeover-grace-seconds = 30         # wait after a lease expires before a takeover
    min-ttl-seconds = 1
    max-ttl-seconds = 604800
    takeover-quorum = 1                 # CODEOWNERS owners releasing a gated takeover
    approval-gates = ["contracts", "memory", "migrations"]
    migration-patterns = ["**/migrations/**", "**/*.sql"]
    max-targets = 1000
    max-text = 4000

    [generated]
    patterns = ["gen/**"]               # generated artifacts create no overlap

    [[generated.artifacts]]             # a first-class artifact: judged on its inputs
    path = "docs/openapi.json"
    inputs = ["src/app/api/**"]

    [roles]                             # principals, "group:NAME" or "*"
    claim = ["*"]
    integrate = ["group:maintainers"]
    deploy = ["alice"]
    arbitrate = ["group:leads"]
    admin = []

    [local]                             # the CLI and `detente mcp` without --server, on a
    roles = ["claim"]                   # store a server with --auth serves (default: none)

    [limits.claim-open]                 # rate limits (unset: unlimited)
    per-principal = 60
    per-session = 20
    window-seconds = 60

    [limits.agent-register]
    per-principal = 120

Every key is optional; an unknown table or key, a wrong type or an out-of-range value is
a ``validation_error`` naming the file and the key. ``detente serve`` flags
(``--meeting-deadline``, ``--takeover-grace``, ``--min-ttl``, ``--max-ttl``; ``--policy
FILE`` reads another file) override the file; ``detente config show`` prints the
effective values and where each came from. The key table is :mod:`detente.config.keys`.
"""

from __future__ import annotations

from detente.config.keys import ALL_KEYS, Key
from detente.config.load import CONFIG_FILE, effective, load_config
from detente.config.model import (
    DEFAULT_SOURCE,
    EVERYONE,
    LIMITED_ACTIONS,
    ROLE_NAMES,
    ProjectConfig,
    RateLimit,
    Roles,
)

__all__ = [
    "ALL_KEYS",
    "CONFIG_FILE",
    "DEFAULT_SOURCE",
    "EVERYONE",
    "LIMITED_ACTIONS",
    "ROLE_NAMES",
    "Key",
    "ProjectConfig",
    "RateLimit",
    "Roles",
    "effective",
    "load_config",
]
