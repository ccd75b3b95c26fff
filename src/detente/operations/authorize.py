"""Who may call which operation: the rules of the operations' declarations.

Each state-changing operation names one rule (:class:`~detente.operations.declaration.
Operation` ``rule``), checked by :class:`~detente.operations.door.Operations` against the
principal of the running call (:func:`~detente.security.identity.current_principal`)
before the handler runs, whatever surface the call came from (``/v1``, MCP over HTTP or
stdio, the in-process client of the CLI and the hooks). A refusal is ``403 forbidden``
(:class:`~detente.errors.ForbiddenError`) naming the role or the owner that was needed;
nothing is written.

The rules (issue #15):

- opening a claim, a takeover, registering an agent or a memory document, reconciling
  intents: ``claim``; an agent session that exists is its registrant's: only that
  principal (or ``admin``) re-registers (renews, ends with a short TTL) it or opens a
  claim under it;
- renew, announce, scope change, suspend, resume, abandon, complete, clean-up, a memory
  write under a claim, a patch of a claim: the claim's own principal, or ``admin``;
  completion that integrates (an ``expectedBaseRef``) also needs ``integrate``, and a
  holder of ``integrate`` may integrate anyone's ``ready_for_review`` claim;
- meeting proposals and acceptances: the principal of the participant claim named;
  a handoff's accept: the receiving claim's principal;
- a human resolution: ``arbitrate``; when the meeting is routed by CODEOWNERS (its
  escalation named arbitrators, or its contested paths have owners), ``arbitrate`` held
  by one of those owners (``@user`` = the principal, ``@org/team`` = its group
  ``org/team``, i.e. ``group:org/team`` in ``[roles]``); the resolution is recorded
  under that owner's handle (:func:`bound_handle`, :func:`as_resolver`);
- a takeover (``claim``) is released by its approval gate: a ``human`` approval by the
  principal of the claim taken over, or by an ``arbitrate`` holder who (when the gated
  targets have CODEOWNERS owners) is one of them; an ``owner`` approval (``claim``)
  whose ``approver`` is the caller's own handle (the decision then checks it against the
  CODEOWNERS owners of the gated targets and counts it toward the quorum);
- deployments: ``deploy``; a deployment policy: ``admin``;
- checking a push to a protected ref (pre-receive, update, reference-transaction) and
  recording it (post-receive), :func:`land_push`: the pusher is bound to each claim the
  pushed commits name: the claim's own principal holding ``integrate``, or an
  integrator (a holder of ``integrate``) landing a claim that is ``ready_for_review``
  (or already ``integrated``). The record needs ``integrate`` in every case, so a push
  whose landing the log could not record is refused before the ref moves (fail closed).

``admin`` passes every rule. The loopback principal ``local`` (no ``--auth``) holds every
role, so a server without authentication behaves as before; a local process on a store
served with authentication holds only ``[local] roles``
(:func:`~detente.operations.local_principal.local_principal`), and its refusals say how
to go through the server (:func:`local_refusal`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from detente.errors import ForbiddenError, NotFoundError
from detente.operations.declaration import Rule

if TYPE_CHECKING:
    from detente.domain.state import RepoState
    from detente.security.identity import Principal
    from detente.service import Service

__all__ = [
    "approve_takeover",
    "arbitrate",
    "as_approver",
    "as_resolver",
    "bound_handle",
    "check_edit",
    "claim_principal",
    "complete",
    "discard_patch",
    "land_push",
    "local_refusal",
    "own_body_claim",
    "own_claim",
    "register_agent",
    "role",
    "routed_owners",
    "session_of",
    "session_reader",
    "session_writer",
]


def claim_principal(service: Service, claim_id: str) -> str:
    """The principal that opened claim ``claim_id``. Raises ``not_found``.

    A claim's principal is set when it opens and never changes, so a projection that
    holds the claim answers as the log does: the cached one, without the repository's
    lock, when it already holds it (a write to a claim does not wait for a running
    batch, nor read the store, to learn who may make it); else the projection caught up
    with the log (:meth:`~detente.service.core.ServiceCore.find_repo`).
    """
    found: list[str] = []

    def holds(state: RepoState) -> bool:
        claim = state.claims.get(claim_id)
        if claim is not None:
            found.append(claim.principal)
        return claim is not None

    if service.find_repo(holds) is None:
        raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)
    return found[0]


def role(name: str) -> Rule:
    """The rule "the caller holds role ``name``"."""

    def rule(service: Service, who: Principal, *args: Any) -> None:
        if not who.has(name):
            raise ForbiddenError(
                f"{who.name!r} does not hold the {name!r} role (see [roles] in detente.toml)",
                principal=who.name,
                role=name,
            )

    return rule


def _owner(service: Service, who: Principal, claim_id: str) -> None:
    if who.has("admin"):
        return
    role("claim")(service, who)
    owner = claim_principal(service, claim_id)
    if owner != who.name:
        raise ForbiddenError(
            f"claim {claim_id} belongs to {owner!r}; {who.name!r} may not act on it "
            "(only its principal or an admin may)",
            principal=who.name,
            claimId=claim_id,
            owner=owner,
        )


def _session_owner(service: Service, who: Principal, session_id: str | None) -> None:
    """An existing agent session is only its registrant's (or an admin's) to renew,
    re-register or work under; a session never registered is anyone's to create."""
    if not session_id or who.has("admin"):
        return
    try:
        owner = service.agents.get_agent(session_id).session.principal
    except NotFoundError:
        return
    if owner != who.name:
        raise ForbiddenError(
            f"agent session {session_id!r} belongs to {owner!r}; {who.name!r} may not "
            "renew, re-register or work under it (register a session id of your own)",
            principal=who.name,
            sessionId=session_id,
            owner=owner,
        )


def register_agent(service: Service, who: Principal, body: Any) -> None:
    """``claim``; re-registering (renewing, shortening, renaming) an existing session is
    for the principal that registered it, or an admin."""
    role("claim")(service, who)
    _session_owner(service, who, getattr(body, "session_id", None))


def open_claim(service: Service, who: Principal, *args: Any) -> None:
    """``claim``; and only the local principal (the CLI on this machine, or a server
    without authentication) may name the directory of a worktree the server creates
    (``createWorktree`` with ``worktree``): a remote caller gets the server's default
    place, never a path of its choosing on the server's disk."""
    from detente.security.identity import LOCAL  # a client declaring operations needs none

    role("claim")(service, who)
    body = args[-1] if args else None
    _session_owner(service, who, session_of(body))
    if (
        getattr(body, "create_worktree", False)
        and getattr(body, "worktree", None)
        and who.name != LOCAL.name
    ):
        raise ForbiddenError(
            f"{who.name!r} may not choose where the server creates a worktree: drop "
            "'worktree' to get the server's default place",
            principal=who.name,
            field="worktree",
        )


def own_claim(service: Service, who: Principal, claim_id: str, *rest: Any) -> None:
    """The claim named by the path is the caller's (or the caller is an admin)."""
    _owner(service, who, claim_id)


def session_reader(service: Service, who: Principal, session_id: str, *rest: Any) -> None:
    """``read``; and a registered session's claims are read only by its registrant (or an
    admin): another principal naming it works under nobody's claims, it is refused. An id
    never registered is a label any client may choose (each sees its own claims)."""
    role("read")(service, who)
    _session_owner(service, who, session_id)


def session_writer(service: Service, who: Principal, session_id: str | None, *_: Any) -> None:
    """``claim``; and a registered session is written (its receipts) or judged (an edit
    check naming it) only by its registrant, or an admin."""
    role("claim")(service, who)
    _session_owner(service, who, session_id)


def check_edit(service: Service, who: Principal, body: Any) -> None:
    """:func:`session_writer` of the session the body names (the pre-commit check's
    ``claim`` without one); a claim it names is the caller's, as for the pre-commit
    check itself (:func:`own_claim`)."""
    session_writer(service, who, getattr(body, "session_id", None))
    claim_id = getattr(body, "claim_id", None)
    if claim_id:
        _owner(service, who, str(claim_id))


def own_body_claim(service: Service, who: Principal, *args: Any) -> None:
    """The claim the body names (``claimId``) is the caller's; without one, ``claim``."""
    claim_id = getattr(args[-1], "claim_id", None)
    if claim_id:
        _owner(service, who, str(claim_id))
    else:
        role("claim")(service, who)


def complete(service: Service, who: Principal, claim_id: str, body: Any) -> None:
    """The caller's own claim; integrating (an ``expectedBaseRef``) needs ``integrate``.

    A holder of ``integrate`` may also integrate another principal's claim once that
    claim is ``ready_for_review`` (review, then merge): the log then records both, the
    claim's principal on the claim and the integrator as the actor of its integration."""
    integrating = getattr(body, "expected_base_ref", None) is not None and getattr(
        body, "integrate", True
    )
    if integrating and who.has("integrate") and _status(service, claim_id) == "ready_for_review":
        return
    _owner(service, who, claim_id)
    if integrating:
        role("integrate")(service, who)


_LANDABLE = ("ready_for_review", "integrated")


def land_push(service: Service, who: Principal, body: Any) -> None:
    """The pusher may land every claim the push names (see the module docstring).

    ``body`` is a pre-receive body (``commits[].claimIds``) or a post-receive one
    (``claimIds``). A claim the log does not know is left to the check itself, which
    refuses it (``evidence_rejected``). Raises ``forbidden`` naming the claim, its
    principal and the pusher.
    """
    if who.has("admin"):
        return
    named = [c for commit in getattr(body, "commits", []) for c in commit.claim_ids]
    named += list(getattr(body, "claim_ids", []))
    for claim_id in dict.fromkeys(named):
        try:
            owner = claim_principal(service, claim_id)
            status = _status(service, claim_id)
        except NotFoundError:
            continue
        if owner == who.name and who.has("integrate"):
            continue
        if owner != who.name and who.has("integrate") and status in _LANDABLE:
            continue
        raise ForbiddenError(
            f"{who.name!r} may not land claim {claim_id} of {owner!r} ({status}): a push "
            "landing a claim must come from its principal holding 'integrate', or from an "
            "integrator ('integrate') once the claim is ready_for_review",
            principal=who.name,
            claimId=claim_id,
            owner=owner,
            role="integrate",
        )
    role("integrate")(service, who)  # the landing is recorded as the pusher's


def _status(service: Service, claim_id: str) -> str:
    repo = service.repo_of_claim(claim_id)
    with service.lock(repo):
        claim = service.fresh(repo).claims.get(claim_id)
    if claim is None:
        raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)
    return str(claim.status.value)


def arbitrate(service: Service, who: Principal, meeting_id: str, body: Any) -> None:
    """``arbitrate``, held by one of the CODEOWNERS owners the meeting is routed to."""
    role("arbitrate")(service, who)
    owners = routed_owners(service, meeting_id)
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
    """How CODEOWNERS may name ``who``: its OIDC subject (an e-mail owner) or the user
    handle ``@subject`` (a registered key is an agent, never a code owner), or one of its
    groups as the team handle ``@org/team`` (the ``[roles]`` entry ``group:org/team``).

    User and team handles never meet: a team handle always has a ``/`` (GitHub's
    ``@org/team``) and a user handle never does, so a group named ``pay-owner`` is not
    the user ``@pay-owner``, and a subject ``org/team`` is not the team."""
    groups = {g.removeprefix("group:").lstrip("@") for g in who.groups}
    teams = {f"@{g}" for g in groups if "/" in g.strip("/")}
    user: set[str] = set()
    if who.via != "key" and "/" not in who.subject:
        user = {who.subject, f"@{who.subject}"}
    return user | teams


def bound_handle(who: Principal, owners: list[str]) -> str:
    """The name a human decision by ``who`` is recorded under: its handle among
    ``owners`` when it is one of them, else its principal name."""
    matches = sorted(_handles(who) & set(owners))
    return matches[0] if matches else who.name


def approve_takeover(service: Service, who: Principal, claim_id: str, body: Any) -> None:
    """The takeover's approval gate (see the module docstring)."""
    role("claim")(service, who)
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
    repo = service.repo_of_claim(claim_id)
    with service.lock(repo):
        successor = service.fresh(repo).claims.get(claim_id)
    info = (successor.takeover or {}) if successor is not None else {}
    taken = info.get("claimId")
    if taken and claim_principal(service, str(taken)) == who.name:
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


def discard_patch(service: Service, who: Principal, patch_id: str, body: Any) -> None:
    """The claim that published the patch is the caller's."""
    role("claim")(service, who)
    _owner(service, who, service.patches.get_patch(patch_id).claim_id)


def as_resolver(service: Service, who: Principal, meeting_id: str, body: Any) -> Any:
    """Resolve as the authenticated human: ``resolvedBy`` is its owner handle (or name),
    never what the body claims (an admin's body is taken as written)."""
    if who.has("admin"):
        return body
    handle = bound_handle(who, routed_owners(service, meeting_id))
    return body.model_copy(update={"resolved_by": handle})


def as_approver(service: Service, who: Principal, claim_id: str, body: Any) -> Any:
    """Approve as the authenticated human: a ``human`` approval is recorded under the
    caller's name (an ``owner`` approval already had to name the caller)."""
    if who.has("admin") or body.kind != "human":
        return body
    return body.model_copy(update={"approver": who.name})


def session_of(body: Any) -> str | None:
    """The agent session a claim or registration body names, if any (rate limits count
    per principal and session)."""
    session = getattr(body, "session_id", None)
    agent = getattr(body, "agent", None)
    if session is None and agent is not None:
        session = getattr(agent, "session_id", None)
    return str(session) if session else None


def local_refusal(exc: ForbiddenError) -> ForbiddenError:
    """``exc`` for the local principal of a store served with authentication: with how to
    act through the server instead."""
    from detente.operations.local_principal import LOCAL_HINT

    return ForbiddenError(
        f"{exc.detail}; this store is served with authentication, where a local process "
        f"holds only the roles of [local] roles in detente.toml: {LOCAL_HINT}",
        **exc.extra,
    )
