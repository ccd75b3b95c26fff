"""Use cases shared by every adapter (HTTP API, CLI local mode, MCP, hooks).

:class:`Service` is the command path (:class:`ServiceCore`: serialize per repo, catch up,
expire, decide, append with CAS, project, notify) with one service per aggregate on top:

- ``claims`` (:class:`~detente.service.claims.ClaimsService`): open, read, renew, scope,
  status, the write check;
- ``takeover`` (:class:`~detente.service.takeover.TakeoverService`): successors, approvals,
  worktree clean-up;
- ``meetings`` (:class:`~detente.service.meetings.MeetingsService`);
- ``agents`` (:class:`~detente.service.agents.AgentsService`): sessions and readiness;
- ``memory`` (:class:`~detente.service.memory.MemoryService`): memory documents;
- ``gates`` (:class:`~detente.service.gates.GatesService`): completion with evidence and
  integration by CAS, the hook checks;
- ``patches`` (:class:`~detente.service.patches.PatchesService`);
- ``deployments`` (:class:`~detente.service.deployments.DeploymentsService`);
- ``reconcile`` (:class:`~detente.service.reconcile.ReconcileService`): symbols a claim's
  work touches, two intents reconciled;
- ``search`` (:class:`~detente.service.search.SearchService`): search over claims and
  memory sections.

Each takes the core and uses only its public interface (:meth:`ServiceCore.repo`,
:meth:`~ServiceCore.fresh`, :meth:`~ServiceCore.execute`, :meth:`~ServiceCore.lock`,
:meth:`~ServiceCore.find_repo`, ...). Log-wide use cases (``events``, ``head``, ``audit``,
``sweep``, ``list_repos``) are the core's own.
"""

from __future__ import annotations

from detente.service.agents import AgentsService
from detente.service.claims import ClaimsService
from detente.service.core import RepoConfig, ServiceCore
from detente.service.deployments import DeploymentsService
from detente.service.gates import GatesService
from detente.service.meetings import MeetingsService
from detente.service.memory import MemoryService
from detente.service.patches import PatchesService
from detente.service.reconcile import ReconcileService
from detente.service.search import SearchService
from detente.service.takeover import TakeoverService
from detente.service.views import ClaimView

__all__ = ["ClaimView", "RepoConfig", "Service", "ServiceCore"]


class Service(ServiceCore):
    """The coordination plane's use cases over one store (see the module docstring).

    Args: as :class:`ServiceCore`.
    """

    claims: ClaimsService
    takeover: TakeoverService
    meetings: MeetingsService
    agents: AgentsService
    memory: MemoryService
    gates: GatesService
    patches: PatchesService
    deployments: DeploymentsService
    reconcile: ReconcileService
    search: SearchService

    def _compose(self) -> None:
        self.claims = ClaimsService(self)
        self.takeover = TakeoverService(self, self.claims)
        self.meetings = MeetingsService(self)
        self.agents = AgentsService(self)
        self.memory = MemoryService(self)
        self.gates = GatesService(self)
        self.patches = PatchesService(self)
        self.deployments = DeploymentsService(self)
        self.reconcile = ReconcileService(self)
        self.search = SearchService(self)
