"""Every operation, declared once: :data:`OPERATIONS` (in the order the HTTP API
registers them) and :data:`BY_NAME`.

The declarations live with their handlers, one module per area (:mod:`.system`,
:mod:`.claims`, :mod:`.meetings`, :mod:`.agents`, :mod:`.memory`, :mod:`.gates`,
:mod:`.index`, :mod:`.resources`). Importing the catalog loads neither pydantic nor the
records nor the service.
"""

from __future__ import annotations

from typing import Any

from detente.operations import (
    agents,
    claims,
    gates,
    index,
    meetings,
    memory,
    resources,
    system,
)
from detente.operations.declaration import Operation

__all__ = ["BY_NAME", "OPERATIONS"]

#: Every operation, in the order the HTTP API registers them (FastAPI matches in order,
#: and the OpenAPI document lists them so).
OPERATIONS: tuple[Operation[Any], ...] = (
    *system.SERVER,
    *claims.OPERATIONS,
    *meetings.OPERATIONS,
    *system.EVENT_LOG,
    *agents.OPERATIONS,
    *memory.OPERATIONS,
    *gates.HOOKS,
    *gates.PATCHES,
    *gates.DEPLOYMENTS,
    *resources.OPERATIONS,
    *index.OPERATIONS,
)

#: Operation name -> its declaration.
BY_NAME: dict[str, Operation[Any]] = {op.name: op for op in OPERATIONS}
