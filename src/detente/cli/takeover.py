"""``detente claim takeover`` and ``claim approve-takeover``.

A takeover happens in this order, so the predecessor's work is never overwritten:

1. the predecessor is read; its ``revision`` becomes ``takeoverOf.expectedClaimRevision``
   (``--expect-revision`` pins it) and its responsibilities (modules, symbols, contracts,
   tests, deployment, memory) carry over to the successor; its path targets carry over
   through the pieces (``--piece TARGET=continue|supersede|discard``, unlisted continue);
2. the takeover is posted with ``createWorktree``; the service saves the predecessor's
   uncommitted changes under ``refs/detente/rescue/<claim>``, records its branch head as
   ``takeoverOf.headCommit`` and, inside the same command, creates a NEW branch
   ``claim/<slug>-<id tail>`` and its worktree at that head commit (the predecessor's
   base when no head is known; the predecessor's branch may still be checked out in its
   own, registered worktree). If git refuses, no successor is recorded
   (:mod:`detente.service.placement`, the rule of ``claim open``).

A takeover that touched contracts, migrations or memory waits for approval (successor
``blocked``): a human, or CODEOWNERS owners, run ``claim approve-takeover``.

``claim check`` lives in :mod:`detente.cli.claim_check`; :func:`register` adds it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.claim_check import check
from detente.cli.claim_open import NoWorktreeOpt, WorktreeDirOpt
from detente.cli.context import JsonFlag, Session, run
from detente.cli.render import EXIT_OVERLAP
from detente.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console


__all__ = ["parse_pieces", "register"]

ExpectRevision = Annotated[
    int | None,
    typer.Option("--expect-revision", help="Claim revision to expect (default: read it now)."),
]

#: Statuses in which a claim is open but may not write yet (exit 6 after a takeover).
_WAITING = ("negotiating", "blocked")


def register(claim_app: typer.Typer) -> None:
    """Add ``takeover``, ``approve-takeover`` and ``check`` to the ``claim`` group."""
    claim_app.command("takeover")(takeover)
    claim_app.command("approve-takeover")(approve_takeover)
    claim_app.command("check")(check)  # from detente.cli.claim_check


def parse_pieces(entries: list[str]) -> list[dict[str, str]]:
    """``TARGET=continue|supersede|discard`` entries as ``[{target, decision}]``.

    Raises:
        ValidationError: ``validation_error`` (field ``piece``) for a malformed entry.
    """
    pieces: list[dict[str, str]] = []
    for entry in entries:
        target, sep, decision = entry.rpartition("=")
        decision = decision.strip()
        if not sep or not target.strip() or decision not in ("continue", "supersede", "discard"):
            raise ValidationError(
                f"--piece takes TARGET=continue|supersede|discard, got {entry!r}", field="piece"
            )
        pieces.append({"target": target.strip(), "decision": decision})
    return pieces


def _approve_commands(claim: Mapping[str, Any]) -> list[str]:
    info = claim.get("takeoverOf") or {}
    if not info.get("pending"):
        return []
    commands = [f"detente claim approve-takeover {claim['id']} --approver NAME"]
    approved = {a.get("approver") for a in info.get("approvals", [])}
    commands += [
        f"detente claim approve-takeover {claim['id']} --approver {owner} --owner"
        for owner in info.get("owners", [])
        if owner not in approved
    ]
    return commands


def _takeover_lines(console: Console, claim: dict[str, Any], worktree: Path | None) -> None:
    info = claim.get("takeoverOf") or {}
    previous = (info.get("previousOwner") or {}).get("name", "?")
    console.print(f"  takeover of {info.get('claimId')} (was {previous})", markup=False)
    head = info.get("headCommit")
    branch = info.get("branch")
    if branch or head:
        console.print(
            f"    its branch {branch or '-'} at {str(head)[:12] if head else '-'} "
            "(left as it is; the successor works on its own branch)",
            markup=False,
        )
    state = info.get("worktreeState") or {}
    if state.get("pruned"):
        console.print(f"    its missing worktree {state.get('path')} was pruned", markup=False)
    for piece in info.get("pieces", []):
        console.print(f"    piece {piece['target']}: {piece['decision']}", markup=False)
    rescue = info.get("rescue")
    if rescue:
        console.print(
            f"  [yellow]rescued[/] its uncommitted work: {rescue['ref']} -> {rescue['oid'][:12]} "
            f"({len(rescue.get('paths', []))} paths)",
            highlight=False,
        )
        for path in rescue.get("paths", [])[:20]:
            console.print(f"    {path}", markup=False)
        where = f"cd {worktree} && " if worktree else ""
        console.print(f"    restore it: {where}git checkout {rescue['oid']} -- .", markup=False)
    if info.get("pending"):
        console.print(
            "  [yellow]waiting for approval[/]: " + "; ".join(info.get("gateReasons", [])),
            highlight=False,
        )
        owners = info.get("owners", [])
        who = "any human"
        if owners:
            who += f", or {info.get('quorum', 1)} of the CODEOWNERS owners {', '.join(owners)}"
        console.print(f"    approvers: {who}", markup=False)
        for command in _approve_commands(claim):
            console.print(f"    {command}", markup=False)


# ---------------------------------------------------------------------------- takeover


def takeover(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The expired or abandoned claim (clm_...).")],
    objective: Annotated[
        str | None,
        typer.Option(
            "--objective", "-o", help="The successor's objective (default: the predecessor's)."
        ),
    ] = None,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", "-p", help="Extra path pattern to claim (repeatable)."),
    ] = None,
    piece: Annotated[
        list[str] | None,
        typer.Option(
            "--piece",
            metavar="TARGET=continue|supersede|discard",
            help="What to do with one of the predecessor's targets (default: continue).",
        ),
    ] = None,
    ttl: Annotated[int, typer.Option("--ttl", help="Lease TTL in seconds.")] = 300,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Agent name (default: $DETENTE_AGENT, the --session's registered name, or $USER).",
        ),
    ] = None,
    session_id: Annotated[str | None, typer.Option("--session", help="Session id.")] = None,
    expect_revision: ExpectRevision = None,
    no_worktree: NoWorktreeOpt = False,
    worktree_dir: WorktreeDirOpt = None,
    json_flag: JsonFlag = False,
) -> None:
    """Take over an expired (past its grace period) or abandoned claim.

    The successor gets a new branch and worktree starting at the predecessor's head
    commit; uncommitted work of the predecessor is saved under a rescue ref (printed,
    with the command restoring it). Exits 7 while the predecessor is still live, 6 when
    the successor is not active yet (negotiating an overlap, or waiting for approval
    because the predecessor touched contracts, migrations or memory).
    """

    def body(session: Session) -> int:
        from detente.cli import workspace
        from detente.client.seeds import successor_seed

        pred = session.client.get_claim(claim_id)["claim"]
        pieces = parse_pieces(piece or [])
        if not no_worktree and session.repo_name != pred["repo"]:
            raise ValidationError(
                f"claim {pred['id']} belongs to repository {pred['repo']!r}, not "
                f"{session.repo_name!r}: run inside it (or pass --no-worktree)",
                field="repo",
            )
        seed = successor_seed(
            pred,
            objective=objective,
            paths=path or (),
            agent=workspace.agent_name(session.client, agent, session_id),
            session=session_id,
            ttl=ttl,
            create_worktree=not no_worktree,
            worktree=None if no_worktree or worktree_dir is None else str(worktree_dir.absolute()),
        )
        response = session.client.take_over(
            seed,
            claim_id=pred["id"],
            expected_claim_revision=(
                expect_revision if expect_revision is not None else int(pred["revision"])
            ),
            pieces=pieces,
        )
        created = workspace.created_worktree(response["claim"], not no_worktree)
        return _report(session, response, created)

    run(ctx, json_flag, body)


def _report(session: Session, response: Mapping[str, Any], worktree: dict[str, str] | None) -> int:
    from detente.cli.views import opened_options

    claim = response["claim"]
    info = claim.get("takeoverOf") or {}
    options = opened_options(response)
    rescue = info.get("rescue")
    restore = f"git checkout {rescue['oid']} -- ." if rescue else None
    approve = _approve_commands(claim)

    def text(console: Console) -> None:
        from rich.markup import escape

        from detente.cli import views

        views.claim_view(console, claim, session.now())
        if worktree:
            console.print(
                f"  [green]worktree created[/] at {worktree['headOid'][:12]} (the predecessor's "
                f"{'head' if info.get('headCommit') else 'base'}) on the new branch "
                f"{escape(worktree['branch'])}"
            )
        _takeover_lines(console, claim, Path(worktree["path"]) if worktree else None)
        views.contest_view(console, response, options)

    session.emit(
        {
            **response,
            "worktree": worktree,
            "rescue": rescue,
            "restore": restore,
            "approve": approve,
            "options": options,
        },
        text,
    )
    return EXIT_OVERLAP if claim["status"] in _WAITING else 0


# ---------------------------------------------------------------------------- approve


def approve_takeover(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The successor claim waiting for approval.")],
    approver: Annotated[str, typer.Option("--approver", help="Who approves (recorded).")],
    owner: Annotated[
        bool,
        typer.Option("--owner", help="Approve as a CODEOWNERS owner (counts toward the quorum)."),
    ] = False,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Approve a pending takeover: a human's approval suffices, owners count to a quorum."""

    def body(session: Session) -> None:
        revision = expect_revision
        if revision is None:
            revision = int(session.client.get_claim(claim_id)["claim"]["revision"])
        response = session.client.approve_takeover(
            claim_id,
            expected_claim_revision=revision,
            approver=approver,
            kind="owner" if owner else "human",
        )
        claim = response["claim"]
        info = claim.get("takeoverOf") or {}

        def text(console: Console) -> None:
            approvals = ", ".join(
                f"{a['approver']} ({a['kind']})" for a in info.get("approvals", [])
            )
            console.print(
                f"{claim['id']}: {claim['status']} (revision {claim['revision']}); "
                f"approvals: {approvals or '-'}",
                markup=False,
            )
            if info.get("pending"):
                console.print("  still waiting for approval:", markup=False)
                for command in _approve_commands(claim):
                    console.print(f"    {command}", markup=False)
            else:
                console.print(f"  {info.get('claimId')} is taken over", markup=False)

        session.emit({**response, "approve": _approve_commands(claim)}, text)

    run(ctx, json_flag, body)
