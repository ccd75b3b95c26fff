"""``detente meeting ...``: list, show, open, propose, accept, resolve, accept-handoff.

A blocking overlap opens a meeting room (``claim open`` / ``claim status`` print its
options). Participants negotiate with ``propose`` (their claim accepts its own proposal)
and ``accept``; a human principal decides with ``resolve`` (after an escalation only one
of the arbitrators named from CODEOWNERS may). The resolution flags are shared by
``propose`` and ``resolve`` (parsed in :mod:`detente.cli.resolution_flags`) and are
exactly what :func:`detente.cli.views.negotiation_options` prints::

    --split CLAIM=TARGET[,TARGET...]   (repeatable)   split_ownership
    --serialize --first CLAIM --then CLAIM             serialize
    --handoff --from CLAIM --to CLAIM                  handoff
    --join CLAIM,CLAIM[,...]   (alias --joint)         joint
    --escalate                                         human_arbitration

Every write reads the meeting first and sends its ``revision`` as
``expectedMeetingRevision`` unless ``--expect-revision N`` pins it, so a concurrent change
is a ``revision_conflict`` (exit 4) and nothing is written. What the commands print is
built in :mod:`detente.cli.meeting_views`.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.cli.meeting_views import (
    countdown,
    describe_resolution,
    meeting_history,
    pending_commands,
    print_meeting,
    print_meetings,
    resolution_options,
    write_report,
)
from detente.cli.resolution_flags import (
    EscalateOpt,
    FirstOpt,
    FromOpt,
    HandoffOpt,
    JoinOpt,
    ResolutionFlags,
    SerializeOpt,
    SplitOpt,
    ThenOpt,
    ToOpt,
    build_resolution,
)

if TYPE_CHECKING:
    from rich.console import Console

#: A write's reply (the meeting view).
Wire = Mapping[str, Any]

__all__ = [
    "build_resolution",
    "countdown",
    "default_principal",
    "describe_resolution",
    "meeting_app",
]

#: Who ``meeting resolve`` says decided when ``--by`` is not given (else ``$USER``).
PRINCIPAL_ENV = "DETENTE_PRINCIPAL"

meeting_app = typer.Typer(
    help="Meeting rooms: negotiate a blocking overlap with a typed resolution.",
    no_args_is_help=True,
)

MeetingId = Annotated[str, typer.Argument(help="The meeting id (mtg_...).")]
AsClaim = Annotated[
    str,
    typer.Option("--as", metavar="CLAIM", help="Your claim: a participant of the meeting."),
]
ExpectRevision = Annotated[
    int | None,
    typer.Option("--expect-revision", help="Meeting revision to expect (default: read it now)."),
]


# ---------------------------------------------------------------------------- helpers


def default_principal() -> str:
    """The human behind ``meeting resolve``: ``$DETENTE_PRINCIPAL``, else the user."""
    name = os.environ.get(PRINCIPAL_ENV) or os.environ.get("USER")
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = "human"
    return name


def _revision(session: Session, meeting_id: str, expect: int | None) -> int:
    if expect is not None:
        return expect
    return int(session.client.get_meeting(meeting_id)["meeting"]["revision"])


def _decide(
    ctx: typer.Context,
    json_flag: bool,
    meeting_id: str,
    expect: int | None,
    flags: ResolutionFlags,
    send: Callable[[Session, int, dict[str, Any]], Wire],
    verb: str,
) -> None:
    """Propose or resolve: the resolution the flags describe, sent at the meeting's
    revision (``expect``, else read now), reported as ``verb``."""

    def body(session: Session) -> None:
        resolution = build_resolution(*flags)
        write_report(
            session, send(session, _revision(session, meeting_id, expect), resolution), verb
        )

    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- reading


@meeting_app.command("list")
def list_(
    ctx: typer.Context,
    status: Annotated[
        str | None, typer.Option("--status", help="Only this status: open|resolved|escalated.")
    ] = None,
    repo: Annotated[
        str | None, typer.Option("--repo", help="Repository name (default: all served).")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """List meetings (oldest first)."""

    def body(session: Session) -> None:
        response = session.client.list_meetings(repo=repo, status=status)
        now = session.now()

        def text(console: Console) -> None:
            print_meetings(console, response["meetings"], now)

        session.emit(response, text)

    run(ctx, json_flag, body)


@meeting_app.command("show")
def show(ctx: typer.Context, meeting_id: MeetingId, json_flag: JsonFlag = False) -> None:
    """A meeting now: participants, contested targets, proposals, deadline, resolution,
    arbitrators and notices, and the resolution options as ready-to-run commands."""

    def body(session: Session) -> None:
        client = session.client
        meeting = client.get_meeting(meeting_id)["meeting"]
        by_id = {c["id"]: c for c in client.list_claims(repo=str(meeting["repo"]))["claims"]}
        claims = [by_id[p] for p in meeting["participants"] if p in by_id]
        participants = [
            {
                "claimId": c["id"],
                "agent": c["agent"],
                "status": c["status"],
                "paths": c.get("paths", []),
                "pendingPaths": c.get("pendingPaths", []),
                "modules": c.get("modules", []),
                "symbols": c.get("symbols", []),
                "expectedContractChanges": c.get("expectedContractChanges", []),
            }
            for c in claims
        ]
        history = meeting_history(client, meeting)
        deadline = countdown(meeting["deadline"], session.now())
        options = resolution_options(client, meeting, claims, history["arbitrators"])
        commands = pending_commands(meeting)
        data = {
            "meeting": {**meeting, **history},
            "participants": participants,
            "deadline": deadline,
            "options": options,
            "next": commands,
        }

        def text(console: Console) -> None:
            print_meeting(
                console,
                meeting,
                participants=participants,
                deadline=deadline,
                history=history,
                options=options,
                commands=commands,
            )

        session.emit(data, text)

    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- writes


@meeting_app.command("propose")
def propose(
    ctx: typer.Context,
    meeting_id: MeetingId,
    as_claim: AsClaim,
    split: SplitOpt = None,
    serialize: SerializeOpt = False,
    first: FirstOpt = None,
    then: ThenOpt = None,
    handoff: HandoffOpt = False,
    from_claim: FromOpt = None,
    to_claim: ToOpt = None,
    join: JoinOpt = None,
    escalate: EscalateOpt = False,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Propose a resolution as a participant (your claim accepts it at once).

    It applies when every affected participant accepted it (at once if only yours is
    affected; --escalate always applies at once). The others' accept commands are printed.
    """

    flags = (split or (), serialize, first, then, handoff, from_claim, to_claim, join or ())

    def send(session: Session, revision: int, resolution: dict[str, Any]) -> Wire:
        return session.client.propose(
            meeting_id, expected_meeting_revision=revision, claim_id=as_claim, resolution=resolution
        )

    _decide(ctx, json_flag, meeting_id, expect_revision, (*flags, escalate), send, "proposed")


@meeting_app.command("accept")
def accept(
    ctx: typer.Context,
    meeting_id: MeetingId,
    proposal_id: Annotated[str, typer.Argument(help="The proposal id (prp_...).")],
    as_claim: AsClaim,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Accept a proposal as an affected participant; the last acceptance applies it."""

    def body(session: Session) -> None:
        revision = _revision(session, meeting_id, expect_revision)
        response = session.client.accept_proposal(
            meeting_id, proposal_id, expected_meeting_revision=revision, claim_id=as_claim
        )
        write_report(session, response, "accepted")

    run(ctx, json_flag, body)


@meeting_app.command("resolve")
def resolve(
    ctx: typer.Context,
    meeting_id: MeetingId,
    split: SplitOpt = None,
    serialize: SerializeOpt = False,
    first: FirstOpt = None,
    then: ThenOpt = None,
    handoff: HandoffOpt = False,
    from_claim: FromOpt = None,
    to_claim: ToOpt = None,
    join: JoinOpt = None,
    escalate: EscalateOpt = False,
    by: Annotated[
        str | None,
        typer.Option("--by", help="The human deciding (default: $DETENTE_PRINCIPAL or $USER)."),
    ] = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Resolve as a human principal (after an escalation: one of its arbitrators)."""

    flags = (split or (), serialize, first, then, handoff, from_claim, to_claim, join or ())
    verb = "escalated" if escalate else "resolved"

    def send(session: Session, revision: int, resolution: dict[str, Any]) -> Wire:
        return session.client.resolve_meeting(
            meeting_id,
            expected_meeting_revision=revision,
            resolution=resolution,
            resolved_by=by or default_principal(),
        )

    _decide(ctx, json_flag, meeting_id, expect_revision, (*flags, escalate), send, verb)


@meeting_app.command("accept-handoff")
def accept_handoff(
    ctx: typer.Context,
    meeting_id: MeetingId,
    as_claim: AsClaim,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Accept a handoff as its recipient: the sender's targets move to your claim."""

    def body(session: Session) -> None:
        revision = _revision(session, meeting_id, expect_revision)
        response = session.client.accept_handoff(
            meeting_id, expected_meeting_revision=revision, claim_id=as_claim
        )
        write_report(session, response, "handoff accepted")

    run(ctx, json_flag, body)


@meeting_app.command("open")
def open_meeting(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="Your claim (the one asking).")],
    with_claim: Annotated[
        str, typer.Option("--with", help="The claim its potential overlap is with.")
    ],
    reason: Annotated[str | None, typer.Option("--reason", help="Why (recorded).")] = None,
    expect_revision: Annotated[
        int | None,
        typer.Option("--expect-revision", help="Claim revision to expect (default: read it now)."),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Open a meeting over a potential overlap (two globs meeting only in paths that do
    not exist yet): both claims stay active, and the room settles who creates them."""

    def body(session: Session) -> None:
        revision = expect_revision
        if revision is None:
            revision = int(session.client.get_claim(claim_id)["claim"]["revision"])
        response = session.client.request_meeting(
            claim_id, expected_claim_revision=revision, with_claim_id=with_claim, reason=reason
        )
        write_report(session, response, "meeting opened")

    run(ctx, json_flag, body)
