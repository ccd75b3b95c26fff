"""Deployment CAS: an environment moves only from the commit the deployer expected (pure).

``POST /v1/deployments/{env}`` names ``expectedPrevCommitOid`` (null for the first
deployment; it is never defaulted). :func:`decide_deploy` checks, in order:

1. the environment still points at ``expectedPrevCommitOid``, else ``stale_base`` with the
   current commit in ``actual`` and nothing recorded;
2. the environment's policy (:class:`DeployPolicy`, set per environment with
   ``deployment.policy_set``, else :func:`default_policy`): every migration listed is
   ``applied`` and every migration the claim's accepted evidence named is listed;
   unresolved risks do not exceed the policy's maximum; where required the claim is
   ``integrated``/``completed``; the commit is a commit and contains the claim's
   integrated head. Every failure is listed in one ``evidence_rejected``.

A deployment to the claim's ``deploymentResponsibility`` environment completes an
``integrated`` claim whose memory evidence is done.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from detente.domain import events as ev
from detente.domain.claims.guards import get_claim
from detente.domain.claims.model import ClaimStatus
from detente.domain.gates.integration import completion_events
from detente.domain.gates.model import Environment, environment_id, environment_to_wire
from detente.domain.policy import OID_PATTERN, IdSource
from detente.domain.state import RepoState
from detente.errors import EvidenceRejected, RevisionConflict, StaleBase, ValidationError

__all__ = [
    "APPLIED",
    "Deploy",
    "DeployFacts",
    "DeployPolicy",
    "Migration",
    "SetPolicy",
    "check_environment_name",
    "decide_deploy",
    "decide_policy",
    "default_policy",
    "effective_policy",
    "policy_to_wire",
]

#: The one migration status that counts as done.
APPLIED = "applied"
_ENV = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
_STRICT = frozenset({"production", "prod"})


@dataclass(frozen=True)
class DeployPolicy:
    """What an environment accepts.

    Attributes:
        max_unresolved_risks: the most unresolved risks a deployment may carry (None: any).
        require_migrations_applied: every listed and required migration must be ``applied``.
        require_integrated: the claim must be ``integrated`` or ``completed``.
    """

    max_unresolved_risks: int | None = None
    require_migrations_applied: bool = True
    require_integrated: bool = False


def default_policy(environment: str) -> DeployPolicy:
    """``production``/``prod``: no unresolved risks, integrated claims only; else lenient."""
    if environment in _STRICT:
        return DeployPolicy(max_unresolved_risks=0, require_integrated=True)
    return DeployPolicy()


def policy_to_wire(policy: DeployPolicy) -> dict[str, Any]:
    return {
        "maxUnresolvedRisks": policy.max_unresolved_risks,
        "requireMigrationsApplied": policy.require_migrations_applied,
        "requireIntegrated": policy.require_integrated,
    }


def effective_policy(env: Environment | None, name: str) -> DeployPolicy:
    """The policy set for the environment, else the default for its name."""
    if env is None or env.policy is None:
        return default_policy(name)
    raw = env.policy
    return DeployPolicy(
        max_unresolved_risks=raw.get("maxUnresolvedRisks"),
        require_migrations_applied=bool(raw.get("requireMigrationsApplied", True)),
        require_integrated=bool(raw.get("requireIntegrated", False)),
    )


@dataclass(frozen=True)
class Migration:
    id: str
    status: str


@dataclass(frozen=True)
class Deploy:
    """``POST /v1/deployments/{env}``."""

    repo: str
    environment: str
    claim_id: str
    commit_oid: str
    expected_prev_commit_oid: str | None
    migrations: tuple[Migration, ...] = ()
    unresolved_risks: tuple[str, ...] = ()


@dataclass(frozen=True)
class SetPolicy:
    """``PUT /v1/deployments/{env}/policy``: ``expectedRevision`` of the environment."""

    repo: str
    environment: str
    policy: DeployPolicy
    expected_revision: int


@dataclass(frozen=True)
class DeployFacts:
    """What git says: ``commit_oid`` resolved (None: not a commit); whether it contains the
    claim's integrated head (None: not known, e.g. the claim is not integrated)."""

    commit_oid: str | None
    contains_claim_head: bool | None = None


def check_environment_name(name: str) -> str:
    """Raises ``validation_error`` (field ``environment``) unless ``[a-z0-9][a-z0-9._-]*``."""
    if not _ENV.match(name):
        raise ValidationError(
            f"environment {name!r} must match [a-z0-9][a-z0-9._-]* (at most 63 characters)",
            field="environment",
        )
    return name


def _subject(state: RepoState, name: str) -> str:
    return f"deployment/{environment_id(state.repo, name)}"


def decide_deploy(
    state: RepoState, cmd: Deploy, facts: DeployFacts, ids: IdSource
) -> list[ev.Event]:
    """Record a deployment (see the module docstring).

    Raises:
        ValidationError, NotFoundError (claim), StaleBase (``actual`` = the environment's
        current commit), EvidenceRejected (``failures`` lists every policy failure).
    """
    name = check_environment_name(cmd.environment)
    claim = get_claim(state, cmd.claim_id)
    commit = cmd.commit_oid.strip().lower()
    if not OID_PATTERN.match(commit):
        raise ValidationError("commitOid must be a commit object id (hex)", field="commitOid")
    expected = cmd.expected_prev_commit_oid
    expected = expected.strip().lower() if expected else None
    env = state.gates.environments.get(environment_id(state.repo, name))
    current = str(env.current["commitOid"]) if env is not None and env.current else None
    if expected != current:
        raise StaleBase(
            f"environment {name} is at {current or 'nothing (never deployed)'}, not "
            f"{expected or 'nothing'}: re-read it and decide again",
            expected=expected,
            actual=current,
            current=environment_to_wire(env) if env is not None else None,
        )
    policy = effective_policy(env, name)
    failures = _policy_failures(state, cmd, facts, policy, claim.id)
    if failures:
        raise EvidenceRejected(failures, environment=name, policy=policy_to_wire(policy))
    oid = facts.commit_oid or commit
    data: dict[str, Any] = {
        "environmentId": environment_id(state.repo, name),
        "environment": name,
        "claimId": claim.id,
        "commitOid": oid,
        "prevCommitOid": current,
        "migrations": [{"id": m.id, "status": m.status} for m in cmd.migrations],
        "unresolvedRisks": list(cmd.unresolved_risks),
    }
    out = [ev.stream_event(ids, _subject(state, name), ev.DEPLOYMENT_RECORDED, **data)]
    if claim.status is ClaimStatus.INTEGRATED and claim.declared.deployment_responsibility == name:
        out += completion_events(claim, ids, via=f"deployed to {name}", deployed=True)
    return out


def _policy_failures(
    state: RepoState, cmd: Deploy, facts: DeployFacts, policy: DeployPolicy, claim_id: str
) -> list[str]:
    claim = state.claims[claim_id]
    failures: list[str] = []
    if facts.commit_oid is None:
        failures.append(f"commitOid {cmd.commit_oid} is not a commit of the repository")
    elif facts.contains_claim_head is False:
        failures.append(
            f"commit {facts.commit_oid[:12]} does not contain claim {claim.id}'s integrated head"
        )
    listed = {m.id: m.status for m in cmd.migrations}
    if policy.require_migrations_applied:
        for mig in cmd.migrations:
            if mig.status != APPLIED:
                failures.append(f"migration {mig.id} is {mig.status}, not {APPLIED}")
        for required in (claim.evidence or {}).get("migrations") or ():
            if str(required) not in listed:
                failures.append(
                    f"migration {required} (named by claim {claim.id}'s evidence) is not listed"
                )
    risks = len(cmd.unresolved_risks)
    limit = policy.max_unresolved_risks
    if limit is not None and risks > limit:
        failures.append(
            f"{risks} unresolved risk(s) ({'; '.join(cmd.unresolved_risks)}); environment "
            f"{cmd.environment} allows at most {limit}"
        )
    if policy.require_integrated and claim.status not in (
        ClaimStatus.INTEGRATED,
        ClaimStatus.COMPLETED,
    ):
        failures.append(
            f"claim {claim.id} is {claim.status.value}; environment {cmd.environment} takes "
            "integrated claims only"
        )
    return failures


def decide_policy(state: RepoState, cmd: SetPolicy, ids: IdSource) -> list[ev.Event]:
    """Set an environment's policy (CAS on the environment's revision; 0 = never touched).

    Raises:
        ValidationError: bad name or a negative maximum.
        RevisionConflict: ``expectedRevision`` is not the environment's revision.
    """
    name = check_environment_name(cmd.environment)
    limit = cmd.policy.max_unresolved_risks
    if limit is not None and limit < 0:
        raise ValidationError("maxUnresolvedRisks must be >= 0", field="maxUnresolvedRisks")
    env = state.gates.environments.get(environment_id(state.repo, name))
    revision = env.revision if env is not None else 0
    if cmd.expected_revision != revision:
        raise RevisionConflict(
            f"environment {name} is at revision {revision}, not {cmd.expected_revision}",
            expected=cmd.expected_revision,
            actual=revision,
            current=environment_to_wire(env) if env is not None else None,
        )
    data = {
        "environmentId": environment_id(state.repo, name),
        "environment": name,
        "policy": policy_to_wire(cmd.policy),
    }
    return [ev.stream_event(ids, _subject(state, name), ev.DEPLOYMENT_POLICY_SET, **data)]
