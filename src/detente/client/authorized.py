"""Who may call which operation: roles and record ownership, checked before the service call.

:class:`AuthorizedCalls` is :class:`~detente.client.inprocess.ServiceCalls` with one rule
per state-changing operation (:data:`RULES`), checked against the principal of the
running request (:func:`~detente.security.identity.current_principal`) before the call.
A refusal is ``403 forbidden`` (:class:`~detente.errors.ForbiddenError`) naming the role
or the owner that was needed; nothing is written.

The rules (issue #15):

- opening a claim, a takeover, registering an agent or a memory document, reconciling
  intents: ``claim``;
- renew, announce, scope change, suspend, resume, abandon, complete, clean-up, a memory
  write under a claim, a patch of a claim: the claim's own principal, or ``admin``;
  completion that integrates (an ``expectedBaseRef``) also needs ``integrate``;
- meeting proposals and acceptances: the principal of the participant claim named;
  a handoff's accept: the receiving claim's principal;
- a human resolution: ``arbitrate``; when the meeting is routed by CODEOWNERS (its
  escalation named arbitrators, or its contested paths have owners), ``arbitrate`` held
  by one of those owners (``@user`` = the principal, ``@org/team`` = its group
  ``org/team``, i.e. ``group:org/team`` in ``[roles]``); the resolution is recorded
  under that owner's handle (:func:`bound_handle`);
- a takeover (``claim``) is released by its approval gate: a ``human`` approval by the
  principal of the claim taken over, or by an ``arbitrate`` holder who (when the gated
  targets have CODEOWNERS owners) is one of them; an ``owner`` approval (``claim``)
  whose ``approver`` is the caller's own handle (the decision then checks it against the
  CODEOWNERS owners of the gated targets and counts it toward the quorum);
- deployments: ``deploy``; a deployment policy: ``admin``; recording a push
  (post-receive): ``integrate``.

``admin`` passes every rule. The loopback principal ``local`` (no ``--auth``) holds every
role, so a server without authentication behaves as before. Every surface calls through
this class: ``/v1``, MCP over HTTP (the same instance and rate limiter,
:mod:`detente.server`), and the in-process client of a local process, whose principal
:func:`~detente.client.local_principal.local_principal` decides (on a store served with
authentication, ``local`` holds only ``[local] roles``; its refusals say how to go through
the server).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from detente.client.calls import ServiceCalls
from detente.errors import ForbiddenError, NotFoundError
from detente.security.identity import Principal, current_principal

if TYPE_CHECKING:  # annotations only, spelled as in ServiceCalls (the routes resolve them
    # in its namespace): a local read never imports pydantic
    from detente.client import bodies as b
    from detente.client import wire
    from detente.security.ratelimit import RateLimiter
    from detente.service import Service

__all__ = [
    "LIMITED",
    "RULES",
    "AuthorizedCalls",
    "bound_handle",
    "claim_principal",
    "routed_owners",
]

#: A rule: ``(calls, principal, *operation arguments) -> None``, raising ``forbidden``.
Rule = Callable[..., None]


def claim_principal(service: Service, claim_id: str) -> str:
    """The principal that opened claim ``claim_id``. Raises ``not_found``."""
    repo = service.repo_of_claim(claim_id)
    with service.lock(repo):
        claim = service.fresh(repo).claims.get(claim_id)
    if claim is None:
        raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)
    return claim.principal


def _role(role: str) -> Rule:
    def rule(calls: AuthorizedCalls, who: Principal, *args: Any) -> None:
        if not who.has(role):
            raise ForbiddenError(
                f"{who.name!r} does not hold the {role!r} role (see [roles] in detente.toml)",
                principal=who.name,
                role=role,
            )

    return rule


def _owner(calls: AuthorizedCalls, who: Principal, claim_id: str) -> None:
    if who.has("admin"):
        return
    _role("claim")(calls, who)
    owner = claim_principal(calls.service, claim_id)
    if owner != who.name:
        raise ForbiddenError(
            f"claim {claim_id} belongs to {owner!r}; {who.name!r} may not act on it "
            "(only its principal or an admin may)",
            principal=who.name,
            claimId=claim_id,
            owner=owner,
        )


def _own_claim(calls: AuthorizedCalls, who: Principal, claim_id: str, *rest: Any) -> None:
    _owner(calls, who, claim_id)


def _own_body_claim(calls: AuthorizedCalls, who: Principal, *args: Any) -> None:
    claim_id = getattr(args[-1], "claim_id", None)
    if claim_id:
        _owner(calls, who, str(claim_id))
    else:
        _role("claim")(calls, who)


def _complete(calls: AuthorizedCalls, who: Principal, claim_id: str, body: Any) -> None:
    _owner(calls, who, claim_id)
    if getattr(body, "expected_base_ref", None) is not None and getattr(body, "integrate", True):
        _role("integrate")(calls, who)


def _arbitrate(calls: AuthorizedCalls, who: Principal, meeting_id: str, body: Any) -> None:
    _role("arbitrate")(calls, who)
    owners = routed_owners(calls.service, meeting_id)
    if owners and not _handles(who) & set(owners):
        raise ForbiddenError(
            f"{who.name!r} may not resolve meeting {meeting_id}: it is routed by CODEOWNERS "
            f"to {', '.join(owners)}, and a human resolution needs the 'arbitrate' role "
            "held by one of those owners (@name, or a group as @org/team)",
            principal=who.name,
            meetingId=meeting_id,
            role="arbitrate",
            owners=owners,
        )


def routed_owners(service: Service, meeting_id: str) -> list[str]:
    """The CODEOWNERS owners a meeting is routed to: the arbitrators its escalation named,
    else the owners of its contested paths now (empty: no CODEOWNERS routing).

    Raises:
        NotFoundError: ``not_found`` for an unknown meeting.
    """
    meeting = service.meetings.get_meeting(meeting_id)
    if meeting.arbitrators:
        return list(meeting.arbitrators)
    paths = [t.target.partition("#")[0] for t in meeting.contested_targets]
    owners, _ = service.owners_of(meeting.repo)(paths)
    return owners


def _handles(who: Principal) -> set[str]:
    """How CODEOWNERS may name ``who``: its name (an e-mail owner), ``@name``, or one of
    its groups as ``@org/team`` (the ``[roles]`` entry ``group:org/team``)."""
    groups = {g.removeprefix("group:").lstrip("@") for g in who.groups}
    return {who.name, f"@{who.name}"} | {f"@{g}" for g in groups}


def bound_handle(who: Principal, owners: list[str]) -> str:
    """The name a human decision by ``who`` is recorded under: its handle among
    ``owners`` when it is one of them, else its principal name."""
    matches = sorted(_handles(who) & set(owners))
    return matches[0] if matches else who.name


def _approve_takeover(calls: AuthorizedCalls, who: Principal, claim_id: str, body: Any) -> None:
    _role("claim")(calls, who)
    kind = getattr(body, "kind", "human")
    if kind == "owner":
        if getattr(body, "approver", None) in _handles(who):
            return  # the decision checks that this handle is an owner of the gated targets
        raise ForbiddenError(
            f"{who.name!r} may not approve the takeover {claim_id} as owner "
            f"{getattr(body, 'approver', None)!r}: an owner approval must name the caller "
            "(@name, or a group as @org/team)",
            principal=who.name,
            claimId=claim_id,
        )
    repo = calls.service.repo_of_claim(claim_id)
    with calls.service.lock(repo):
        successor = calls.service.fresh(repo).claims.get(claim_id)
    info = (successor.takeover or {}) if successor is not None else {}
    taken = info.get("claimId")
    if taken and claim_principal(calls.service, str(taken)) == who.name:
        return  # the holder of the claim taken over consents
    listed = info.get("owners")
    owners = [str(o) for o in listed] if isinstance(listed, list | tuple) else []
    if who.has("arbitrate") and (not owners or _handles(who) & set(owners)):
        return
    raise ForbiddenError(
        f"{who.name!r} may not approve the takeover {claim_id}: a human approval needs the "
        "principal of the claim taken over, or the 'arbitrate' role"
        + (
            f" held by one of the CODEOWNERS owners of its targets ({', '.join(owners)})"
            if owners
            else ""
        ),
        principal=who.name,
        claimId=claim_id,
        role="arbitrate",
    )


def _discard_patch(calls: AuthorizedCalls, who: Principal, patch_id: str, body: Any) -> None:
    _role("claim")(calls, who)
    _owner(calls, who, calls.service.patches.get_patch(patch_id).claim_id)


#: Operation name (a :class:`ServiceCalls` method) -> its rule. Reads have none.
RULES: dict[str, Rule] = {
    "open_claim": _role("claim"),
    "takeover": _role("claim"),
    "approve_takeover": _approve_takeover,
    "announce": _own_claim,
    "renew": _own_claim,
    "scope_change": _own_claim,
    "change_objective": _own_claim,
    "suspend": _own_claim,
    "resume": _own_claim,
    "abandon": _own_claim,
    "complete": _complete,
    "cleanup": _own_claim,
    "check_writes": _own_claim,
    "propose": _own_body_claim,
    "accept_proposal": _own_body_claim,
    "accept_handoff": _own_body_claim,
    "resolve_meeting": _arbitrate,
    "register_agent": _role("claim"),
    "readiness": _role("claim"),
    "register_document": _role("claim"),
    "patch_section": _own_body_claim,
    "write_document": _own_body_claim,
    "append_entry": _own_body_claim,
    "render": _role("claim"),
    "reconcile": _role("claim"),
    "publish_patch": _own_body_claim,
    "discard_patch": _discard_patch,
    "deploy": _role("deploy"),
    "set_deploy_policy": _role("admin"),
    "pre_receive": _role("claim"),
    "post_receive": _role("integrate"),
    "pre_commit": _role("claim"),
    "reconcile_intents": _role("claim"),
}


def _session(body: Any) -> str | None:
    """The agent session a claim or registration body names, if any."""
    session = getattr(body, "session_id", None)
    agent = getattr(body, "agent", None)
    if session is None and agent is not None:
        session = getattr(agent, "session_id", None)
    return str(session) if session else None


#: Rate-limited operations -> their ``[limits]`` action.
LIMITED: dict[str, str] = {
    "open_claim": "claim-open",
    "takeover": "claim-open",
    "register_agent": "agent-register",
}


def _local_refusal(exc: ForbiddenError) -> ForbiddenError:
    """``exc`` for the local principal of a store served with authentication: with how to
    act through the server instead."""
    from detente.client.local_principal import LOCAL_HINT

    return ForbiddenError(
        f"{exc.detail}; this store is served with authentication, where a local process "
        f"holds only the roles of [local] roles in detente.toml: {LOCAL_HINT}",
        **exc.extra,
    )


class AuthorizedCalls(ServiceCalls):
    """:class:`ServiceCalls` whose state-changing operations check :data:`RULES` first,
    then the rate limits of :data:`LIMITED` (admins included).

    Args:
        service: the use cases.
        limiter: the ``[limits]`` counts; None: unlimited.
    """

    def __init__(self, service: Service, *, limiter: RateLimiter | None = None) -> None:
        super().__init__(service)
        self.limiter = limiter

    def __getattribute__(self, name: str) -> Any:
        attr = super().__getattribute__(name)
        rule = RULES.get(name)
        if rule is None:
            return attr

        def guarded(*args: Any, **kwargs: Any) -> Any:
            who = current_principal()
            if not who.has("admin"):
                try:
                    rule(self, who, *args, *kwargs.values())
                except ForbiddenError as exc:
                    if who.via != "local":
                        raise
                    raise _local_refusal(exc) from None
            action = LIMITED.get(name)
            if action is not None and self.limiter is not None:
                self.limiter.check(action, who.name, _session(args[-1]) if args else None)
            return attr(*args, **kwargs)

        return guarded

    def resolve_meeting(self, meeting_id: str, body: b.ResolveIn) -> wire.MeetingView:
        """Resolve as the authenticated human: ``resolvedBy`` is its owner handle (or
        name), never what the body claims (an admin's body is taken as written)."""
        who = current_principal()
        if not who.has("admin"):
            handle = bound_handle(who, routed_owners(self.service, meeting_id))
            body = body.model_copy(update={"resolved_by": handle})
        return super().resolve_meeting(meeting_id, body)

    def approve_takeover(self, claim_id: str, body: b.ApproveTakeoverIn) -> wire.ClaimView:
        """Approve as the authenticated human: a ``human`` approval is recorded under the
        caller's name (an ``owner`` approval already had to name the caller)."""
        who = current_principal()
        if not who.has("admin") and body.kind == "human":
            body = body.model_copy(update={"approver": who.name})
        return super().approve_takeover(claim_id, body)
