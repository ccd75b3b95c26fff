"""Use cases shared by every adapter (HTTP API, CLI local mode, MCP, hooks).

:class:`Service` is the command path (:class:`ServiceCore`: serialize per repo, catch up,
expire, decide, append with CAS, project, notify) with one service per aggregate on top:

- ``claims`` (:class:`~detente.service.claims.ClaimsService`): open, read, renew, scope,
  status, the write check;
- ``takeover`` (:class:`~detente.service.takeover.TakeoverService`): successors, approvals,
  worktree clean-up;
- ``meetings`` (:class:`~detente.service.meetings.MeetingsService`);
- ``agents`` (:class:`~detente.service.agents.AgentsService`): sessions and readiness;
- ``principals`` (:class:`~detente.service.principals.PrincipalsService`): agent keys,
  each change recorded in the log;
- ``memory`` (:class:`~detente.service.memory.MemoryService`): memory documents;
- ``gates`` (:class:`~detente.service.gates.GatesService`): completion with evidence and
  integration by CAS, the hook checks;
- ``patches`` (:class:`~detente.service.patches.PatchesService`);
- ``deployments`` (:class:`~detente.service.deployments.DeploymentsService`);
- ``resources`` (:class:`~detente.service.resources.ResourcesService`): shared resources
  (counted leases with fencing, waiters in line, a number counter);
- ``reconcile`` (:class:`~detente.service.reconcile.ReconcileService`): symbols a claim's
  work touches, two intents reconciled;
- ``search`` (:class:`~detente.service.search.SearchService`): search over claims and
  memory sections;
- ``merge_checks`` (:class:`~detente.service.merge_checks.MergeChecksService`): a claim's
  branch merged with its neighbours' (predicted conflicts open rooms) and its work
  compared with its scope (drift); the sweep runs it for branches that moved.

Each takes the core and uses only its public interface (:meth:`ServiceCore.repo`,
:meth:`~ServiceCore.fresh`, :meth:`~ServiceCore.execute`, :meth:`~ServiceCore.lock`,
:meth:`~ServiceCore.find_repo`, ...). Log-wide use cases (``events``, ``head``, ``audit``,
``sweep``, ``list_repos``) are the core's own.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from detente.service.core import RepoConfig, ServiceCore

if TYPE_CHECKING:
    from detente.service.agents import AgentsService
    from detente.service.claims import ClaimsService
    from detente.service.deployments import DeploymentsService
    from detente.service.gates import GatesService
    from detente.service.meetings import MeetingsService
    from detente.service.memory import MemoryService
    from detente.service.merge_checks import MergeChecksService
    from detente.service.patches import PatchesService
    from detente.service.principals import PrincipalsService
    from detente.service.reconcile import ReconcileService
    from detente.service.resources import ResourcesService
    from detente.service.search import SearchService
    from detente.service.takeover import TakeoverService
    from detente.service.views import ClaimView

__all__ = ["ClaimView", "RepoConfig", "Service", "ServiceCore"]


class Service(ServiceCore):
    """The coordination plane's use cases over one store (see the module docstring).

    Each per-aggregate service is built (and its module imported) on first use, so a
    process that only reads claims (a CLI call) never imports the memory, deployment or
    symbol code. They hold nothing but the core, so two threads racing to build one get
    equivalent objects.

    Args: as :class:`ServiceCore`.
    """

    @functools.cached_property
    def claims(self) -> ClaimsService:
        from detente.service.claims import ClaimsService

        return ClaimsService(self)

    @functools.cached_property
    def takeover(self) -> TakeoverService:
        from detente.service.takeover import TakeoverService

        return TakeoverService(self, self.claims)

    @functools.cached_property
    def meetings(self) -> MeetingsService:
        from detente.service.meetings import MeetingsService

        return MeetingsService(self)

    @functools.cached_property
    def agents(self) -> AgentsService:
        from detente.service.agents import AgentsService

        return AgentsService(self)

    @functools.cached_property
    def principals(self) -> PrincipalsService:
        from detente.service.principals import PrincipalsService

        return PrincipalsService(self)

    @functools.cached_property
    def memory(self) -> MemoryService:
        from detente.service.memory import MemoryService

        return MemoryService(self)

    @functools.cached_property
    def gates(self) -> GatesService:
        from detente.service.gates import GatesService

        return GatesService(self)

    @functools.cached_property
    def patches(self) -> PatchesService:
        from detente.service.patches import PatchesService

        return PatchesService(self)

    @functools.cached_property
    def deployments(self) -> DeploymentsService:
        from detente.service.deployments import DeploymentsService

        return DeploymentsService(self)

    @functools.cached_property
    def resources(self) -> ResourcesService:
        from detente.service.resources import ResourcesService

        return ResourcesService(self)

    @functools.cached_property
    def reconcile(self) -> ReconcileService:
        from detente.service.reconcile import ReconcileService

        return ReconcileService(self)

    @functools.cached_property
    def merge_checks(self) -> MergeChecksService:
        from detente.service.merge_checks import MergeChecksService

        return MergeChecksService(self, self.claims)

    def sweep(self) -> int:
        """The core's sweep (expire leases, escalate meetings), then merge checks of the
        live claims whose branch moved since their newest check (a few per sweep; a
        failure is logged, never raised: :meth:`MergeChecksService.sweep`).

        Returns:
            How many claims expired.
        """
        expired = super().sweep()
        self.merge_checks.sweep()
        return expired

    @functools.cached_property
    def search(self) -> SearchService:
        from detente.service.search import SearchService

        return SearchService(self)


def __getattr__(name: str) -> object:
    # ``ClaimView`` on first use: a read-only caller of the core (the local pre-commit
    # hook) does not import the views.
    if name == "ClaimView":
        from detente.service.views import ClaimView

        return ClaimView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
