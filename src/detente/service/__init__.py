"""Use cases shared by every adapter (HTTP API, CLI local mode, MCP, hooks).

:class:`Service` composes one class per area over :class:`ServiceCore` (the command
path: serialize per repo, catch up, expire, decide, append with CAS, project, notify).
"""

from __future__ import annotations

from detente.service.agents import AgentsService
from detente.service.claims import ClaimsService, ClaimView
from detente.service.core import RepoConfig, ServiceCore
from detente.service.deployments import DeploymentsService
from detente.service.integration import GatesService
from detente.service.meetings import MeetingsService
from detente.service.memory import MemoryService
from detente.service.patches import PatchesService
from detente.service.reconcile import ReconcileService
from detente.service.search import SearchService
from detente.service.takeover import TakeoverService

__all__ = ["ClaimView", "RepoConfig", "Service", "ServiceCore"]


class Service(
    TakeoverService,
    ClaimsService,
    MeetingsService,
    AgentsService,
    MemoryService,
    GatesService,
    PatchesService,
    DeploymentsService,
    ReconcileService,
    SearchService,
):
    """The coordination plane's use cases over one store (see :class:`ServiceCore`)."""
