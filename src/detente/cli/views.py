"""Readable (rich) views of claims, overlaps, meetings, events and audits.

Everything shown that came from a user or a repository (objectives, path patterns such as
``src/[ab].py``) is escaped: rich markup must never eat a glob class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.cli.render import lease_timer
from detente.domain.claims.wire import contract_text, tests_text

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "audit_view",
    "claim_view",
    "claims_table",
    "event_line",
    "meeting_view",
    "negotiation_options",
    "overlaps_view",
]

_STATUS_STYLE = {
    "active": "green",
    "negotiating": "yellow",
    "blocked": "red",
    "suspended": "magenta",
    "expired": "red",
    "abandoned": "dim",
}


def _e(value: object) -> str:
    from rich.markup import escape

    return escape(str(value))


def _status(status: str) -> str:
    style = _STATUS_STYLE.get(status, "bold")
    return f"[{style}]{_e(status)}[/]"


def _short(oid: object) -> str:
    return str(oid)[:12] if oid else "-"


def claim_view(console: Console, claim: Mapping[str, Any], now: datetime) -> None:
    """The claim's identity, scope, execution place and lease."""
    console.print(f"claim [bold]{_e(claim['id'])}[/]  {_status(claim['status'])}")
    rows: list[tuple[str, str]] = [
        ("objective", _e(claim["objective"])),
        ("agent", _e(claim["agent"]["name"])),
        ("repo", f"{_e(claim['repo'])}  base {_short(claim['baseCommit'])}"),
    ]
    for label, key in (
        ("paths", "paths"),
        ("pending", "pendingPaths"),
        ("modules", "modules"),
        ("symbols", "symbols"),
    ):
        if claim.get(key):
            rows.append((label, ", ".join(_e(v) for v in claim[key])))
    rows += [(label, _e(text)) for label, text in intent_rows(claim)]
    for pattern, cuts in (claim.get("carveOuts") or {}).items():
        rows.append(("carved", f"{_e(pattern)} minus {', '.join(_e(c) for c in cuts)}"))
    if claim.get("branch"):
        rows.append(("branch", _e(claim["branch"])))
    if claim.get("worktree"):
        rows.append(("worktree", _e(claim["worktree"])))
    lease = claim["lease"]
    timer = lease_timer(lease["expiresAt"], now)
    if claim["status"] in ("abandoned", "completed", "integrated", "taken_over", "expired"):
        timer = f"not running (deadline was {lease['expiresAt']})"
    rows.append(("lease", f"{timer}  revision {lease['revision']}, ttl {lease['ttlSeconds']}s"))
    rows.append(("revision", f"{claim['revision']}  fencing token {claim['fencingToken']}"))
    if claim.get("statusReason"):
        rows.append(("reason", _e(claim["statusReason"])))
    for label, value in rows:
        console.print(f"  {label:<10} {value}")


def intent_rows(claim: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rest of a claim's declared intent as ``(label, plain text)`` rows.

    Contract changes as ``TYPE:AREA:CHANGE`` (or the bare area), the test plan by kind,
    the deployment responsibility, and memory targets with their ``#sections`` and a
    mode other than ``section``: everything ``claim open`` was told.
    """
    rows: list[tuple[str, str]] = []
    contracts = [contract_text(c) for c in claim.get("expectedContractChanges") or []]
    if contracts:
        rows.append(("contracts", ", ".join(contracts)))
    tests = tests_text(claim.get("testResponsibility") or [])
    if tests:
        rows.append(("tests", tests))
    if claim.get("deploymentResponsibility"):
        rows.append(("deploy", str(claim["deploymentResponsibility"])))
    memory = []
    for impact in claim.get("memoryImpacts") or []:
        text = str(impact["path"])
        if impact.get("sections"):
            text += "#" + ",".join(impact["sections"])
        if impact.get("mode") not in (None, "section"):
            text += f" ({impact['mode']})"
        memory.append(text)
    if memory:
        rows.append(("memory", ", ".join(memory)))
    return rows


def overlaps_view(
    console: Console, overlaps: Sequence[Mapping[str, Any]], mine: str | None = None
) -> None:
    """Each overlap: the other claim, its agent, the contested targets with a witness;
    for a ``potential`` one (with ``mine``, this claim's id) the command opening a
    meeting over it."""
    for overlap in overlaps:
        console.print(
            f"  [yellow]overlap[/] with {_e(overlap['claimId'])} "
            f"({_e(overlap['agent']['name'])}, {_e(overlap.get('theirStatus', '?'))}): "
            f"{_e(overlap['kind'])}, {_e(overlap['severity'])}"
        )
        for target in overlap["targets"]:
            console.print(
                f"    mine {_e(target['mine'])}  theirs {_e(target['theirs'])}  "
                f"witness [bold]{_e(target['witness'])}[/]"
            )
        console.print(f"    reason: {_e(overlap['reason'])}")
        if mine and overlap["severity"] == "potential":
            console.print(
                f"    to settle who creates them: detente meeting open {mine} "
                f"--with {overlap['claimId']}",
                markup=False,
            )


def meeting_view(console: Console, meeting: Mapping[str, Any]) -> None:
    """The meeting's status, deadline and contested targets (and, for a room a predicted
    merge conflict opened, the conflicting hunks)."""
    console.print(
        f"  meeting {_e(meeting['id'])}  {_e(meeting['status'])}, "
        f"deadline {_e(meeting['deadline'])}, participants {', '.join(meeting['participants'])}"
    )
    for target in meeting.get("contestedTargets", []):
        console.print(f"    contested {_e(target['target'])}: {_e(target['reason'])}")
    merge_conflict_lines(console, meeting, "    ")


def escaped_line(text: str) -> str:
    """``text`` (a line of a file: a conflicting hunk) with its control characters (C0
    but tab, DEL, C1) and bidirectional controls written as Python escapes (``\\x1b``,
    ``\\u202e``), so that a branch's bytes never drive the reader's terminal."""
    from detente.domain.text_rules import BIDI_CONTROLS

    out = []
    for ch in text:
        code = ord(ch)
        if ch != "\t" and (code < 0x20 or 0x7F <= code < 0xA0 or ch in BIDI_CONTROLS):
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def merge_conflict_lines(console: Console, meeting: Mapping[str, Any], indent: str) -> None:
    """The predicted merge conflicts that opened or joined a room, each with its hunks."""
    for conflict in meeting.get("mergeConflicts") or []:
        pair = " and ".join(conflict.get("claimIds", []))
        files = ", ".join(conflict.get("files", []))
        console.print(f"{indent}predicted merge conflict of {pair} in {files}", markup=False)
        for hunk in conflict.get("hunks", []):
            console.print(f"{indent}  {hunk['path']}:{hunk['line']}", markup=False)
            for line in str(hunk["text"]).splitlines():
                console.print(f"{indent}    {escaped_line(line)}", markup=False)


def opened_options(response: Mapping[str, Any]) -> list[dict[str, str]]:
    """The options of a claim just opened or taken over: :func:`negotiation_options`
    while it negotiates in a meeting, else none."""
    claim, meeting = response["claim"], response.get("meeting")
    if claim["status"] != "negotiating" or not meeting:
        return []
    return negotiation_options(claim, response.get("overlaps", []), meeting)


def contest_view(
    console: Console, response: Mapping[str, Any], options: Sequence[Mapping[str, str]]
) -> None:
    """A claim just opened or taken over: its overlaps, its meeting, and the ``options``
    that settle the meeting (see :func:`opened_options`)."""
    overlaps_view(console, response.get("overlaps", []), response["claim"]["id"])
    meeting = response.get("meeting")
    if meeting:
        meeting_view(console, meeting)
    if options:
        console.print("[yellow]not active[/]: a blocking overlap must be resolved first. Options:")
        for option in options:
            console.print(f"  {option['label']:<10} {option['command']}", markup=False)


_OPTION_LABELS = {
    "split_ownership": "split",
    "serialize": "serialize",
    "handoff": "handoff",
    "joint": "join",
    "human_arbitration": "escalate",
}


def negotiation_options(
    claim: Mapping[str, Any], overlaps: Sequence[Mapping[str, Any]], meeting: Mapping[str, Any]
) -> list[dict[str, str]]:
    """The meeting's resolution options as ready-to-run commands.

    Returns:
        ``[{type, label, command}]``, one per option the meeting offers, plus
        ``withdraw`` (abandon this claim).
    """
    mine, mtg = str(claim["id"]), str(meeting["id"])
    # Only this meeting's participants: a command naming a claim outside the room fails.
    room = set(meeting.get("participants") or ())
    overlaps = [o for o in overlaps if not room or str(o["claimId"]) in room]
    # The claim this one waits for: a holder that already writes (not another waiter).
    holders = [o for o in overlaps if o.get("theirStatus") not in ("negotiating", None)]
    other = str((holders or overlaps)[0]["claimId"]) if overlaps else "OTHER_CLAIM"
    contested = {str(t["mine"]) for o in overlaps for t in o["targets"]}
    wanted = [*claim.get("paths", []), *claim.get("pendingPaths", [])]
    theirs_by_claim: dict[str, set[str]] = {}
    for o in overlaps:
        theirs_by_claim.setdefault(str(o["claimId"]), set()).update(
            str(t["theirs"]) for t in o["targets"]
        )
    uncontested = [p for p in wanted if p not in contested]
    # A room's resolution names every live participant: the room's other parties too,
    # not only those this claim overlaps (each gets nothing contested).
    bystanders = sorted(room - set(theirs_by_claim) - {mine})
    if uncontested and not _files_shared(theirs_by_claim):
        # The others keep what this claim contests; this claim keeps the rest. Each other
        # claim is assigned its own contested pattern (carve-outs kept), so this runs.
        split = f"--split {mine}={_q(','.join(uncontested))} " + " ".join(
            f"--split {claim_id}={_q(','.join(sorted(targets)))}"
            for claim_id, targets in sorted(theirs_by_claim.items())
        )
    else:
        # Everything this claim wants is contested, or two others hold one file (a file
        # and a symbol inside it cannot both be assigned): this claim gets its contested
        # targets, carved out of the others' globs (each other claim gets none of them).
        split = f"--split {mine}={_q(','.join(sorted(contested) or wanted))} " + " ".join(
            f"--split {claim_id}=" for claim_id in sorted(theirs_by_claim)
        )
    split = " ".join([split.strip(), *(f"--split {b}=" for b in bystanders)])
    # Three or more parties: joining names every claim involved, not only the first.
    everyone = sorted(set(theirs_by_claim) | set(bystanders)) or [other]
    commands = {
        "split_ownership": (f"detente meeting resolve {mtg} {split}"),
        "serialize": f"detente meeting resolve {mtg} --serialize --first {other} --then {mine}",
        "handoff": f"detente meeting resolve {mtg} --handoff --from {other} --to {mine}",
        "joint": f"detente meeting resolve {mtg} --join {','.join([*everyone, mine])}",
        "human_arbitration": f"detente meeting resolve {mtg} --escalate",
    }
    options = [
        {"type": kind, "label": _OPTION_LABELS.get(kind, kind), "command": commands[kind]}
        for kind in meeting.get("options", [])
        if kind in commands
    ]
    options.append(
        {
            "type": "withdraw",
            "label": "withdraw",
            "command": f"detente claim abandon {mine} --reason 'overlap with {other}'",
        }
    )
    return options


def _files_shared(theirs_by_claim: Mapping[str, set[str]]) -> bool:
    """Whether two claims' targets name one file (``f.py`` and ``f.py::K.b``): a split
    assigning each its own would leave both covering the symbol."""
    seen: dict[str, str] = {}
    for claim_id, targets in theirs_by_claim.items():
        for target in targets:
            file = target.split("::", 1)[0]
            if seen.setdefault(file, claim_id) != claim_id:
                return True
    return False


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)


def claims_table(console: Console, claims: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """One row per claim: id, status, agent, paths, lease timer, branch."""
    from rich.table import Table

    if not claims:
        console.print("no claims")
        return
    if console.width < _WIDE:
        _claims_list(console, claims, now)
        return
    table = Table(show_edge=False, pad_edge=False)
    for column in ("id", "status", "agent", "lease"):
        table.add_column(column, no_wrap=True)
    for column in ("targets", "branch"):
        table.add_column(column, overflow="fold")
    for claim in claims:
        table.add_row(
            _e(claim["id"]),
            _status(claim["status"]),
            _e(claim["agent"]["name"]),
            _timer(claim, now),
            _e(targets_text(claim)),
            _e(claim.get("branch") or "-"),
        )
    console.print(table)


#: Below this many columns a claim list is one block per claim instead of a table (the
#: id, status, agent and lease columns alone take ~70 columns).
_WIDE = 120


def targets_text(claim: Mapping[str, Any]) -> str:
    """Everything a claim holds on one line: its paths (granted, then pending), then
    ``module M``, ``symbol S`` and ``contract AREA`` for the other kinds of target."""
    parts = [*claim.get("paths", []), *claim.get("pendingPaths", [])]
    parts += [f"module {m}" for m in claim.get("modules", [])]
    parts += [f"symbol {s}" for s in claim.get("symbols", [])]
    parts += [f"contract {contract_text(c)}" for c in claim.get("expectedContractChanges", [])]
    return ", ".join(parts) or "-"


def _timer(claim: Mapping[str, Any], now: datetime) -> str:
    if claim["status"] in ("abandoned", "completed", "integrated", "expired"):
        return "-"
    return lease_timer(claim["lease"]["expiresAt"], now).split(" (")[0]


def _claims_list(console: Console, claims: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """The narrow form: a header line per claim, then its paths and branch indented."""
    for claim in claims:
        console.print(
            f"{_e(claim['id'])}  {_status(claim['status'])}  {_e(claim['agent']['name'])}  "
            f"lease {_timer(claim, now)}"
        )
        console.print(f"  paths   {_e(targets_text(claim))}")
        console.print(f"  branch  {_e(claim.get('branch') or '-')}")


def event_line(event: Mapping[str, Any]) -> str:
    """One plain line for an event envelope: ``#seq at type subject summary``."""
    data = event.get("data") or {}
    parts: list[str] = []
    if "status" in data:
        parts.append(str(data["status"]))
    agent = data.get("agent")
    if isinstance(agent, Mapping):
        parts.append(f"agent={agent.get('name')}")
    if data.get("paths"):
        parts.append("paths=" + ",".join(str(p) for p in data["paths"]))
    if "leaseRevision" in data:
        parts.append(f"lease r{data['leaseRevision']} until {data.get('expiresAt')}")
    if data.get("reason"):
        parts.append(f"({data['reason']})")
    return (
        f"#{event.get('seq')} {event.get('at')} {event.get('type')} "
        f"{event.get('subject')} {' '.join(parts)}"
    ).rstrip()


def audit_view(console: Console, report: Mapping[str, Any]) -> None:
    """``audit ok: N events, head <hash>`` or the first broken link and mismatches."""
    if report.get("ok"):
        console.print(
            f"[green]audit ok[/]: {report['events']} events, hash chain intact, projections "
            f"equal a full replay, protocol invariants hold; head {str(report['headHash'])[:16]}"
        )
        return
    console.print(f"[bold red]audit FAILED[/] after {report.get('events')} events")
    broken = report.get("brokenAt")
    if broken:
        console.print(f"  first broken link at seq {broken['seq']}: {_e(broken['reason'])}")
    for mismatch in report.get("projectionMismatches", []):
        console.print(f"  projection mismatch: {_e(mismatch)}")
    for violation in report.get("invariantViolations", []):
        console.print(f"  invariant violated: {_e(violation)}")
    for finding in report.get("anchorViolations", []):
        console.print(f"  anchor: {_e(finding)}")
