"""``detente meeting ...``: list, show, propose, accept, resolve, accept-handoff.

A blocking overlap opens a meeting room (``claim open`` / ``claim status`` print its
options). Participants negotiate with ``propose`` (their claim accepts its own proposal)
and ``accept``; a human principal decides with ``resolve`` (after an escalation only one
of the arbitrators named from CODEOWNERS may). The resolution flags are shared by
``propose`` and ``resolve`` and are exactly what :func:`detente.cli.views.negotiation_options`
prints::

    --split CLAIM=TARGET[,TARGET...]   (repeatable)   split_ownership
    --serialize --first CLAIM --then CLAIM             serialize
    --handoff --from CLAIM --to CLAIM                  handoff
    --join CLAIM,CLAIM[,...]   (alias --joint)         joint
    --escalate                                         human_arbitration

Every write reads the meeting first and sends its ``revision`` as
``expectedMeetingRevision`` unless ``--expect-revision N`` pins it, so a concurrent change
is a ``revision_conflict`` (exit 4) and nothing is written.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run

if TYPE_CHECKING:
    from rich.console import Console

    from detente.cli.client import Client

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
SplitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--split",
        metavar="CLAIM=TARGET[,TARGET...]",
        help="split_ownership: the claim keeps exactly these targets (repeat per claim).",
    ),
]
SerializeOpt = Annotated[
    bool, typer.Option("--serialize", help="serialize: --first works, --then waits (suspended).")
]
FirstOpt = Annotated[
    str | None, typer.Option("--first", metavar="CLAIM", help="serialize: goes first.")
]
ThenOpt = Annotated[
    str | None, typer.Option("--then", metavar="CLAIM", help="serialize: waits for --first.")
]
HandoffOpt = Annotated[
    bool, typer.Option("--handoff", help="handoff: --from's contested targets move to --to.")
]
FromOpt = Annotated[
    str | None, typer.Option("--from", metavar="CLAIM", help="handoff: the sender.")
]
ToOpt = Annotated[
    str | None, typer.Option("--to", metavar="CLAIM", help="handoff: the recipient (accepts).")
]
JoinOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--join",
        "--joint",
        metavar="CLAIM,CLAIM[,...]",
        help="joint: these claims share the contested targets.",
    ),
]
EscalateOpt = Annotated[
    bool, typer.Option("--escalate", help="human_arbitration: block everyone until a human.")
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


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def build_resolution(
    *,
    split: Sequence[str] = (),
    serialize: bool = False,
    first: str | None = None,
    then: str | None = None,
    handoff: bool = False,
    from_claim: str | None = None,
    to_claim: str | None = None,
    join: Sequence[str] = (),
    escalate: bool = False,
) -> dict[str, Any]:
    """The resolution object the flags describe (exactly one kind must be chosen).

    ``--first``/``--then`` imply ``--serialize`` and ``--from``/``--to`` imply
    ``--handoff``; ``--split`` entries naming the same claim are merged.

    Raises:
        ValidationError: ``validation_error`` (exit 2) naming the flag at fault.
    """
    from detente.errors import ValidationError

    chosen = [
        kind
        for kind, given in (
            ("--split", bool(split)),
            ("--serialize", serialize or first is not None or then is not None),
            ("--handoff", handoff or from_claim is not None or to_claim is not None),
            ("--join", bool(join)),
            ("--escalate", escalate),
        )
        if given
    ]
    if len(chosen) != 1:
        raise ValidationError(
            "choose exactly one resolution: --split CLAIM=TARGET[,TARGET...] (repeatable), "
            "--serialize --first CLAIM --then CLAIM, --handoff --from CLAIM --to CLAIM, "
            "--join CLAIM,CLAIM[,...] or --escalate"
            + (f" (got {', '.join(chosen)})" if chosen else ""),
            field="resolution",
        )
    kind = chosen[0]
    if kind == "--split":
        assignments: dict[str, list[str]] = {}
        for entry in split:
            claim_id, sep, targets = entry.partition("=")
            claim_id = claim_id.strip()
            if not sep or not claim_id or not _ids(targets):
                raise ValidationError(
                    f"--split takes CLAIM=TARGET[,TARGET...], got {entry!r}", field="split"
                )
            merged = assignments.setdefault(claim_id, [])
            merged.extend(t for t in _ids(targets) if t not in merged)
        return {
            "type": "split_ownership",
            "assignments": [{"claimId": c, "targets": t} for c, t in assignments.items()],
        }
    if kind == "--serialize":
        for name, value in (("first", first), ("then", then)):
            if not value:
                raise ValidationError(
                    "--serialize needs --first CLAIM and --then CLAIM", field=name
                )
        return {"type": "serialize", "first": first, "then": then}
    if kind == "--handoff":
        for name, value in (("from", from_claim), ("to", to_claim)):
            if not value:
                raise ValidationError("--handoff needs --from CLAIM and --to CLAIM", field=name)
        return {"type": "handoff", "fromClaimId": from_claim, "toClaimId": to_claim}
    if kind == "--join":
        members = list(dict.fromkeys(c for entry in join for c in _ids(entry)))
        if len(members) < 2:
            raise ValidationError("--join needs at least two claims: CLAIM,CLAIM", field="join")
        return {"type": "joint", "claimIds": members}
    return {"type": "human_arbitration"}


def describe_resolution(resolution: Mapping[str, Any]) -> str:
    """One line: ``serialize: clm_a first, then clm_b`` and so on."""
    kind = resolution.get("type")
    if kind == "split_ownership":
        parts = [f"{a['claimId']} -> {', '.join(a['targets'])}" for a in resolution["assignments"]]
        text = "split: " + "; ".join(parts)
    elif kind == "serialize":
        text = f"serialize: {resolution['first']} first, then {resolution['then']}"
    elif kind == "handoff":
        moved = ", ".join(resolution.get("targets") or []) or "its overlapping targets"
        state = "accepted" if resolution.get("accepted") else "awaiting the recipient's acceptance"
        text = (
            f"handoff: {resolution['fromClaimId']} -> {resolution['toClaimId']} ({moved}; {state})"
        )
    elif kind == "joint":
        text = "joint: " + ", ".join(resolution["claimIds"])
    elif kind == "human_arbitration":
        text = "human arbitration"
    else:
        text = str(kind)
    if resolution.get("resolvedBy"):
        text += f"  (by {resolution['resolvedBy']})"
    return text


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def countdown(deadline: str, now: datetime) -> dict[str, Any]:
    """``{at, secondsLeft, passed, text}`` for a meeting deadline (RFC 3339)."""
    from detente.clock import parse_time

    at = parse_time(deadline)
    seconds = int((at - now).total_seconds())
    when = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = (
        f"in {_duration(seconds)} (at {when})"
        if seconds >= 0
        else f"passed {_duration(-seconds)} ago (at {when})"
    )
    return {"at": deadline, "secondsLeft": seconds, "passed": seconds < 0, "text": text}


def _revision(session: Session, meeting_id: str, expect: int | None) -> int:
    if expect is not None:
        return expect
    return int(session.client.get_meeting(meeting_id)["meeting"]["revision"])


def _history(client: Client, meeting: Mapping[str, Any]) -> dict[str, Any]:
    """Arbitrators, escalation and notices of ``meeting`` (from the record, else the log).

    The meeting record on the wire may not carry them; they are then read from the
    meeting's own ``meeting.escalated`` and ``meeting.notice`` events.
    """
    if all(key in meeting for key in ("arbitrators", "escalation", "notices")):
        return {
            "arbitrators": list(meeting.get("arbitrators") or []),
            "escalation": meeting.get("escalation"),
            "notices": list(meeting.get("notices") or []),
        }
    subject = f"meeting/{meeting['id']}"
    arbitrators: list[str] = []
    escalation: dict[str, Any] | None = None
    notices: list[dict[str, Any]] = []
    since = 0
    while True:
        page = client.events(since=since, limit=1000, repo=str(meeting["repo"]))
        for event in page["events"]:
            if event.get("subject") != subject:
                continue
            data = event.get("data") or {}
            if event.get("type") == "meeting.escalated":
                escalation = {k: v for k, v in data.items() if k != "meetingId"}
                escalation["at"] = event.get("at")
                arbitrators = [str(a) for a in data.get("arbitrators") or []]
            elif event.get("type") == "meeting.notice":
                notices.append(
                    {
                        "claimId": data.get("claimId"),
                        "reason": data.get("reason"),
                        "at": event.get("at"),
                    }
                )
        if not page["events"]:
            break
        since = int(page["nextSince"])
    return {"arbitrators": arbitrators, "escalation": escalation, "notices": notices}


def _pending_commands(meeting: Mapping[str, Any]) -> list[str]:
    """What is still to be done: acceptances of open proposals, a handoff's acceptance."""
    mtg = meeting["id"]
    commands: list[str] = []
    if meeting["status"] == "open":
        for proposal in meeting.get("proposals", []):
            if proposal.get("status") != "open":
                continue
            for claim_id in proposal.get("affected", []):
                if claim_id not in proposal.get("acceptedBy", []):
                    commands.append(
                        f"detente meeting accept {mtg} {proposal['id']} --as {claim_id}"
                    )
    resolution = meeting.get("resolution") or {}
    if resolution.get("type") == "handoff" and not resolution.get("accepted"):
        commands.append(f"detente meeting accept-handoff {mtg} --as {resolution['toClaimId']}")
    return commands


def _options(
    client: Client,
    meeting: Mapping[str, Any],
    claims: Sequence[Mapping[str, Any]],
    arbitrators: Sequence[str],
) -> list[dict[str, str]]:
    """The resolution options as ready-to-run commands (an open or escalated meeting).

    They are the options ``claim open`` prints, from the point of view of the first
    participant still waiting (negotiating or blocked), each with its ``propose`` form
    (``--as`` that claim) while the meeting is open; after an escalation, ``resolve`` with
    ``--by`` the arbitrator when there is exactly one.
    """
    from detente.cli.views import negotiation_options

    if meeting["status"] not in ("open", "escalated") or not meeting.get("participants"):
        return []
    waiting = [c for c in claims if c["status"] in ("negotiating", "blocked")]
    mine = waiting[0] if waiting else (claims[-1] if claims else None)
    if mine is None:
        return []
    overlaps = [
        o
        for o in client.get_claim(str(mine["id"])).get("overlaps", [])
        if o["claimId"] in meeting["participants"]
    ]
    if not overlaps:
        others = [p for p in meeting["participants"] if p != mine["id"]]
        contested = [t["target"] for t in meeting.get("contestedTargets", [])]
        overlaps = [
            {"claimId": other, "targets": [{"mine": t, "theirs": t} for t in contested]}
            for other in others[:1]
        ]
    options = negotiation_options(mine, overlaps, meeting)
    mtg = str(meeting["id"])
    resolve_prefix = f"detente meeting resolve {mtg}"
    out: list[dict[str, str]] = []
    for option in options:
        if meeting["status"] == "escalated" and option["type"] == "human_arbitration":
            continue
        entry = dict(option)
        command = option["command"]
        if command.startswith(resolve_prefix):
            if meeting["status"] == "open":
                entry["propose"] = command.replace(
                    resolve_prefix, f"detente meeting propose {mtg} --as {mine['id']}", 1
                )
            elif len(arbitrators) == 1:
                entry["command"] = f"{command} --by {_q(arbitrators[0])}"
        out.append(entry)
    return out


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _e(value: object) -> str:
    from rich.markup import escape

    return escape(str(value))


def _claims_lines(console: Console, claims: Sequence[Mapping[str, Any]]) -> None:
    for claim in claims:
        paths = ", ".join([*claim.get("paths", []), *claim.get("pendingPaths", [])]) or "-"
        console.print(
            f"    {claim['id']}  {claim['agent']['name']}  {claim['status']}  {paths}",
            markup=False,
        )


def _proposal_lines(console: Console, meeting: Mapping[str, Any]) -> None:
    for proposal in meeting.get("proposals", []):
        accepted = list(proposal.get("acceptedBy", []))
        waiting = [c for c in proposal.get("affected", []) if c not in accepted]
        line = (
            f"    {proposal['id']}  by {proposal['claimId']}  {proposal['status']}: "
            f"{describe_resolution(proposal['resolution'])}; accepted by {', '.join(accepted)}"
        )
        if waiting and proposal.get("status") == "open" and meeting["status"] == "open":
            line += f"; waiting for {', '.join(waiting)}"
        console.print(line, markup=False)


def _write_report(session: Session, response: Mapping[str, Any], headline: str) -> None:
    meeting = response["meeting"]
    claims = response.get("claims", [])
    commands = _pending_commands(meeting)

    def text(console: Console) -> None:
        console.print(
            f"{headline}: meeting [bold]{_e(meeting['id'])}[/] {_e(meeting['status'])}, "
            f"revision {meeting['revision']}"
        )
        if meeting.get("resolution"):
            console.print(
                f"  resolution  {describe_resolution(meeting['resolution'])}", markup=False
            )
        if meeting.get("proposals"):
            console.print("  proposals")
            _proposal_lines(console, meeting)
        if claims:
            console.print("  claims")
            _claims_lines(console, claims)
        if commands:
            console.print("  next")
            for command in commands:
                console.print(f"    {command}", markup=False)

    session.emit({**response, "next": commands}, text)


# ---------------------------------------------------------------------------- reading


@meeting_app.command("list")
def list_(
    ctx: typer.Context,
    status: Annotated[
        str | None, typer.Option("--status", help="Only this status: open|resolved|escalated.")
    ] = None,
    repo: Annotated[
        str | None, typer.Option("--repo", help="Repository name [default: all served].")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """List meetings (oldest first)."""

    def body(session: Session) -> None:
        response = session.client.list_meetings(repo=repo, status=status)
        now = session.now()

        def text(console: Console) -> None:
            from rich.table import Table

            meetings = response["meetings"]
            if not meetings:
                console.print("no meetings")
                return
            table = Table(show_edge=False, pad_edge=False)
            for column in ("id", "status", "rev", "deadline"):
                table.add_column(column, no_wrap=True)
            for column in ("participants", "contested", "resolution"):
                table.add_column(column, overflow="fold")
            for meeting in meetings:
                deadline = (
                    countdown(meeting["deadline"], now)["text"].split(" (")[0]
                    if meeting["status"] == "open"
                    else "-"
                )
                resolution = meeting.get("resolution")
                table.add_row(
                    _e(meeting["id"]),
                    _e(meeting["status"]),
                    str(meeting["revision"]),
                    deadline,
                    _e(", ".join(meeting["participants"])),
                    _e(", ".join(t["target"] for t in meeting.get("contestedTargets", []))),
                    _e(describe_resolution(resolution) if resolution else "-"),
                )
            console.print(table)

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
            }
            for c in claims
        ]
        history = _history(client, meeting)
        deadline = countdown(meeting["deadline"], session.now())
        options = _options(client, meeting, claims, history["arbitrators"])
        commands = _pending_commands(meeting)
        data = {
            "meeting": {**meeting, **history},
            "participants": participants,
            "deadline": deadline,
            "options": options,
            "next": commands,
        }

        def text(console: Console) -> None:
            status = meeting["status"]
            console.print(
                f"meeting [bold]{_e(meeting['id'])}[/]  {_e(status)}  "
                f"revision {meeting['revision']}  repo {_e(meeting['repo'])}"
            )
            when = deadline["text"] if status == "open" else f"{meeting['deadline']} (over)"
            console.print(f"  deadline     {when}", markup=False)
            console.print("  participants")
            for p in participants:
                paths = ", ".join([*p["paths"], *p["pendingPaths"]]) or "-"
                console.print(
                    f"    {p['claimId']}  {p['agent']['name']}  {p['status']}  {paths}",
                    markup=False,
                )
            console.print("  contested")
            for target in meeting.get("contestedTargets", []):
                console.print(
                    f"    {target['target']}  ({', '.join(target['claimIds'])}): "
                    f"{target['reason']}",
                    markup=False,
                )
            if meeting.get("proposals"):
                console.print("  proposals")
                _proposal_lines(console, meeting)
            if meeting.get("resolution"):
                console.print(
                    f"  resolution   {describe_resolution(meeting['resolution'])}", markup=False
                )
            if history["escalation"] is not None or history["arbitrators"]:
                reason = (history["escalation"] or {}).get("reason", "")
                console.print(
                    f"  escalated    {reason}; arbitrators: "
                    f"{', '.join(history['arbitrators']) or 'none in CODEOWNERS (any human)'}",
                    markup=False,
                )
            for notice in history["notices"]:
                console.print(
                    f"  notice       {notice.get('claimId')}: {notice.get('reason')}",
                    markup=False,
                )
            if options:
                console.print("  options")
                for option in options:
                    console.print(f"    {option['label']:<10} {option['command']}", markup=False)
                    if "propose" in option:
                        console.print(f"    {'':<10} {option['propose']}", markup=False)
            if commands:
                console.print("  next")
                for command in commands:
                    console.print(f"    {command}", markup=False)

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

    def body(session: Session) -> None:
        resolution = build_resolution(
            split=split or (),
            serialize=serialize,
            first=first,
            then=then,
            handoff=handoff,
            from_claim=from_claim,
            to_claim=to_claim,
            join=join or (),
            escalate=escalate,
        )
        revision = _revision(session, meeting_id, expect_revision)
        response = session.client.propose(
            meeting_id,
            expected_meeting_revision=revision,
            claim_id=as_claim,
            resolution=resolution,
        )
        _write_report(session, response, "proposed")

    run(ctx, json_flag, body)


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
        _write_report(session, response, "accepted")

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
        typer.Option("--by", help="The human deciding [default: $DETENTE_PRINCIPAL or $USER]."),
    ] = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Resolve as a human principal (after an escalation: one of its arbitrators)."""

    def body(session: Session) -> None:
        resolution = build_resolution(
            split=split or (),
            serialize=serialize,
            first=first,
            then=then,
            handoff=handoff,
            from_claim=from_claim,
            to_claim=to_claim,
            join=join or (),
            escalate=escalate,
        )
        revision = _revision(session, meeting_id, expect_revision)
        response = session.client.resolve_meeting(
            meeting_id,
            expected_meeting_revision=revision,
            resolution=resolution,
            resolved_by=by or default_principal(),
        )
        _write_report(session, response, "escalated" if escalate else "resolved")

    run(ctx, json_flag, body)


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
        _write_report(session, response, "handoff accepted")

    run(ctx, json_flag, body)
