"""What the ``detente meeting`` commands show, and how they show it.

The one-line form of a resolution, deadline countdowns, a meeting's escalation history
and notices, the commands still to run (acceptances) and the resolution options as
ready-to-run commands; then the text renderings of ``meeting list``, ``meeting show`` and
of the reply to every write. ``rich`` is imported only when text is printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.cli.render import duration

if TYPE_CHECKING:
    from rich.console import Console

    from detente.cli.context import Session
    from detente.client import Client
    from detente.domain.meetings.resolution_types import Resolution

__all__ = [
    "countdown",
    "describe_resolution",
    "meeting_history",
    "pending_commands",
    "print_meeting",
    "print_meetings",
    "resolution_options",
    "write_report",
]


# ---------------------------------------------------------------------------- what to show


def status_label(meeting: Mapping[str, Any]) -> str:
    """The status a human reads: a room closed with no contest left is ``dissolved``
    (on the wire it is ``resolved`` with ``outcome: dissolved``)."""
    if meeting["status"] == "resolved" and meeting.get("outcome") == "dissolved":
        return "dissolved"
    return str(meeting["status"])


def _parsed(resolution: Mapping[str, Any]) -> Resolution | None:
    """The typed resolution of a record's ``resolution`` (None: a dissolution, or a type
    this CLI does not know)."""
    from detente.domain.meetings.resolution_types import resolution_from_wire
    from detente.errors import ValidationError

    try:
        return resolution_from_wire(resolution)
    except ValidationError:
        return None


def describe_resolution(resolution: Mapping[str, Any]) -> str:
    """One line: ``serialize: clm_a first, then clm_b`` and so on."""
    parsed = _parsed(resolution)
    text = parsed.describe() if parsed is not None else str(resolution.get("type"))
    if resolution.get("resolvedBy"):
        text += f"  (by {resolution['resolvedBy']})"
    return text


def countdown(deadline: str, now: datetime) -> dict[str, Any]:
    """``{at, secondsLeft, passed, text}`` for a meeting deadline (RFC 3339)."""
    from detente.clock import parse_time

    at = parse_time(deadline)
    seconds = int((at - now).total_seconds())
    when = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    text = (
        f"in {duration(seconds)} (at {when})"
        if seconds >= 0
        else f"passed {duration(-seconds)} ago (at {when})"
    )
    return {"at": deadline, "secondsLeft": seconds, "passed": seconds < 0, "text": text}


def meeting_history(client: Client, meeting: Mapping[str, Any]) -> dict[str, Any]:
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


def pending_commands(meeting: Mapping[str, Any]) -> list[str]:
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
    parsed = _parsed(meeting.get("resolution") or {})
    recipient = parsed.awaits() if parsed is not None else None
    if recipient is not None:
        commands.append(f"detente meeting accept-handoff {mtg} --as {recipient}")
    return commands


def resolution_options(
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
    overlaps: list[Mapping[str, Any]] = [
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


# ---------------------------------------------------------------------------- text


def _e(value: object) -> str:
    from rich.markup import escape

    return escape(str(value))


def _claims_lines(console: Console, claims: Sequence[Mapping[str, Any]]) -> None:
    for claim in claims:
        from detente.cli.views import targets_text

        console.print(
            f"    {claim['id']}  {claim['agent']['name']}  {claim['status']}  "
            f"{targets_text(claim)}",
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


def write_report(session: Session, response: Mapping[str, Any], headline: str) -> None:
    """Emit a write's reply: the meeting, its proposals and claims, the commands still to
    run (``next`` in the JSON document)."""
    meeting = response["meeting"]
    claims = response.get("claims", [])
    commands = pending_commands(meeting)

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


def print_meetings(console: Console, meetings: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """``meeting list``: one block per meeting that fits 80 columns (ids never wrap)."""
    if not meetings:
        console.print("no meetings")
        return
    for meeting in meetings:
        if meeting["status"] == "resolved":
            deadline = "closed"
        else:
            left = str(countdown(meeting["deadline"], now)["text"]).split(" (")[0]
            deadline = f"deadline {left}"
        console.print(
            f"{meeting['id']}  {status_label(meeting)}  rev {meeting['revision']}  {deadline}",
            markup=False,
        )
        console.print(f"  participants  {', '.join(meeting['participants'])}", markup=False)
        contested = ", ".join(t["target"] for t in meeting.get("contestedTargets", []))
        console.print(f"  contested     {contested or '-'}", markup=False)
        resolution = meeting.get("resolution")
        if resolution:
            console.print(f"  resolution    {describe_resolution(resolution)}", markup=False)


def print_meeting(
    console: Console,
    meeting: Mapping[str, Any],
    *,
    participants: Sequence[Mapping[str, Any]],
    deadline: Mapping[str, Any],
    history: Mapping[str, Any],
    options: Sequence[Mapping[str, str]],
    commands: Sequence[str],
) -> None:
    """``meeting show``: the meeting, its participants, history, options and next commands."""
    status = meeting["status"]
    console.print(
        f"meeting [bold]{_e(meeting['id'])}[/]  {_e(status_label(meeting))}  "
        f"revision {meeting['revision']}  repo {_e(meeting['repo'])}"
    )
    when = str(deadline["text"]) if status != "resolved" else f"{meeting['deadline']} (closed)"
    console.print(f"  deadline     {when}", markup=False)
    console.print("  participants")
    for p in participants:
        from detente.cli.views import targets_text

        console.print(
            f"    {p['claimId']}  {p['agent']['name']}  {p['status']}  {targets_text(p)}",
            markup=False,
        )
    console.print("  contested")
    for target in meeting.get("contestedTargets", []):
        console.print(
            f"    {target['target']}  ({', '.join(target['claimIds'])}): {target['reason']}",
            markup=False,
        )
    if meeting.get("mergeConflicts"):
        from detente.cli.views import merge_conflict_lines

        merge_conflict_lines(console, meeting, "  ")
    if meeting.get("proposals"):
        console.print("  proposals")
        _proposal_lines(console, meeting)
    if meeting.get("resolution"):
        console.print(f"  resolution   {describe_resolution(meeting['resolution'])}", markup=False)
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
