"""Deployment CAS use cases (API.md "Deployments and patches": ``/v1/deployments/{env}``).

The environment's pointer moves only from the commit the deployer expected; policy
checks are pure (:mod:`detente.domain.gates.deployments`); the git facts (is the commit a
commit, does it contain the claim's integrated head) are read before the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from detente.domain.claims.model import Claim
from detente.domain.gates.deployments import (
    Deploy,
    DeployFacts,
    SetPolicy,
    check_environment_name,
    decide_deploy,
    decide_policy,
    effective_policy,
    policy_to_wire,
)
from detente.domain.gates.model import Environment, environment_id, environment_to_wire
from detente.domain.state import RepoState
from detente.errors import ValidationError
from detente.service.core import ServiceCore
from detente.service.repo_refs import ref_store

__all__ = ["DeploymentView", "DeploymentsService"]


@dataclass(frozen=True)
class DeploymentView:
    """An environment: its current deployment, policy and history."""

    repo: str
    name: str
    environment: Environment | None
    policy: dict[str, Any]

    def to_wire(self) -> dict[str, Any]:
        """``{deployment, history[], environment, policy}`` (``deployment`` null before the
        first one)."""
        env = self.environment
        return {
            "deployment": (
                {**env.current, "environment": self.name, "repo": self.repo}
                if env is not None and env.current
                else None
            ),
            "history": list(env.history) if env is not None else [],
            "environment": environment_to_wire(env) if env is not None else None,
            "policy": self.policy,
        }


class DeploymentsService:
    """Deploy by CAS, read an environment, set its policy."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _deploy_repo(self, repo: str | None) -> str:
        if repo:
            return self.core.repo(repo).name
        if len(self.core.repos) == 1:
            return next(iter(self.core.repos))
        raise ValidationError(
            "this server coordinates several repositories: name one in repo", field="repo"
        )

    def _deploy_facts(self, repo: str, claim: Claim | None, commit: str) -> DeployFacts:
        config = self.core.repos[repo]
        if config.path is None and config.refs is None:
            return DeployFacts(commit_oid=commit.lower())
        refs = ref_store(config, needed_for="deployment")
        try:
            oid = refs.resolve_commit(commit, field="commitOid")
        except ValidationError:
            return DeployFacts(commit_oid=None)
        moved = (claim.integration or {}) if claim is not None else {}
        head = moved.get("newOid") if moved.get("outcome") == "integrated" else None
        if not head:
            return DeployFacts(commit_oid=oid)
        return DeployFacts(commit_oid=oid, contains_claim_head=refs.is_ancestor(str(head), oid))

    def deploy(self, cmd: Deploy) -> DeploymentView:
        """Move ``cmd.environment`` to ``cmd.commit_oid`` if it is still at
        ``cmd.expected_prev_commit_oid`` and the policy allows it.

        Raises:
            ValidationError, NotFoundError, StaleBase (``actual`` = the environment's current
            commit; nothing recorded), EvidenceRejected (every policy failure listed).
        """
        repo = self._deploy_repo(cmd.repo)
        name = check_environment_name(cmd.environment)
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            claim = state.claims.get(cmd.claim_id)
        facts = self._deploy_facts(repo, claim, cmd.commit_oid)
        # The view is built inside the command's unit of work (see :meth:`ServiceCore.run`).
        return self.core.run(
            repo,
            lambda s: decide_deploy(s, cmd, facts, self.core.ids),
            lambda s, _: _env_view(s, name),
        )

    def get_deployment(self, environment: str, repo: str | None = None) -> DeploymentView:
        """The environment's current deployment, history and effective policy."""
        name = check_environment_name(environment)
        repo = self._deploy_repo(repo)
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            return _env_view(state, name)

    def list_deployments(self, repo: str | None = None) -> list[DeploymentView]:
        """Every environment deployed to or given a policy, by repository and name.

        Raises:
            ValidationError: ``validation_error`` for an unknown repository.
        """
        out: list[DeploymentView] = []
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            with self.core.lock(name):
                envs = sorted(
                    (e for e in state.gates.environments.values() if e.repo == name),
                    key=lambda e: e.name,
                )
                out += [_env_view(state, e.name) for e in envs]
        return out

    def set_deploy_policy(self, cmd: SetPolicy) -> DeploymentView:
        """Set the environment's policy (evented). Raises ``revision_conflict``."""
        repo = self._deploy_repo(cmd.repo)
        return self.core.run(
            repo,
            lambda s: decide_policy(s, cmd, self.core.ids),
            lambda s, _: _env_view(s, cmd.environment),
        )


def _env_view(state: RepoState, name: str) -> DeploymentView:
    env = state.gates.environments.get(environment_id(state.repo, name))
    return DeploymentView(state.repo, name, env, policy_to_wire(effective_policy(env, name)))
