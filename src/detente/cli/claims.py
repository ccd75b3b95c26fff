"""``detente claim ...``: renew, scope, status, list, suspend, resume, abandon, complete.

The group and ``claim open`` live in ``claim_open.py``; this module adds the rest.

Writes name the revision they expect: the command reads the claim first and sends its
current ``revision`` (and lease revision) unless ``--expect-revision`` /
``--expect-lease-revision`` pin them, so a concurrent change is a ``revision_conflict``
(exit 4), never a silent overwrite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.claim_open import claim_app
from detente.cli.context import JsonFlag, Session, run
from detente.cli.render import EXIT_OVERLAP

if TYPE_CHECKING:
    from rich.console import Console

    from detente.operations import wire

__all__ = ["claim_app"]

scope_app = typer.Typer(help="Change a claim's scope (re-runs overlap analysis).")
claim_app.add_typer(scope_app, name="scope")

ClaimId = Annotated[str, typer.Argument(help="The claim id (clm_...).")]
Reason = Annotated[str | None, typer.Option("--reason", help="Why (recorded in the log).")]
ExpectRevision = Annotated[
    int | None,
    typer.Option("--expect-revision", help="Claim revision to expect (default: read it now)."),
]


def _read(session: Session, claim_id: str) -> wire.Claim:
    return session.client.get_claim(claim_id)["claim"]


# ---------------------------------------------------------------------------- lease


@claim_app.command("renew")
def renew(
    ctx: typer.Context,
    claim_id: ClaimId,
    ttl: Annotated[
        int | None, typer.Option("--ttl", help="New TTL in seconds (default: the current one).")
    ] = None,
    expect_revision: ExpectRevision = None,
    expect_lease_revision: Annotated[
        int | None,
        typer.Option("--expect-lease-revision", help="Lease revision to expect."),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Heartbeat: extend the lease to now + TTL (exit 5 once it has expired)."""

    def body(session: Session) -> None:
        current = _read(session, claim_id)
        lease = current["lease"]
        response = session.client.renew(
            claim_id,
            expected_lease_revision=(
                expect_lease_revision if expect_lease_revision is not None else lease["revision"]
            ),
            expected_claim_revision=(
                expect_revision if expect_revision is not None else current["revision"]
            ),
            ttl_seconds=ttl if ttl is not None else int(lease["ttlSeconds"]),
        )
        claim = response["claim"]

        def text(console: Console) -> None:
            from detente.cli.render import lease_timer

            console.print(
                f"renewed {claim['id']}: lease revision {claim['lease']['revision']}, "
                f"{lease_timer(claim['lease']['expiresAt'], session.now())}"
            )

        session.emit(response, text)

    run(ctx, json_flag, body)


@claim_app.command("announce")
def announce(
    ctx: typer.Context,
    claim_id: ClaimId,
    ttl: Annotated[
        int | None, typer.Option("--ttl", help="Lease TTL in seconds (default: the draft's).")
    ] = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Announce a draft (``claim open --draft``): its lease starts now and it activates,
    or negotiates like any new claim (exit 6)."""

    def body(session: Session) -> int:
        revision = (
            expect_revision if expect_revision is not None else _read(session, claim_id)["revision"]
        )
        response = session.client.announce(
            claim_id, expected_claim_revision=revision, ttl_seconds=ttl
        )
        claim = response["claim"]

        def text(console: Console) -> None:
            from detente.cli import views

            views.claim_view(console, claim, session.now())
            views.overlaps_view(console, response.get("overlaps", []))

        session.emit(response, text)
        return EXIT_OVERLAP if claim["status"] == "negotiating" else 0

    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- scope


def _scope_change(
    ctx: typer.Context, json_flag: bool, claim_id: str, expect: int | None, **changes: Any
) -> None:
    def body(session: Session) -> int:
        from detente.cli.views import negotiation_options

        revision = expect if expect is not None else _read(session, claim_id)["revision"]
        response = session.client.scope_change(
            claim_id, expected_claim_revision=revision, **changes
        )
        claim = response["claim"]
        meeting = response.get("meeting")
        negotiating = claim["status"] == "negotiating" and bool(claim.get("pendingPaths"))
        options = (
            negotiation_options(claim, response.get("overlaps", []), meeting) if meeting else []
        )

        def text(console: Console) -> None:
            from detente.cli import views

            views.claim_view(console, claim, session.now())
            views.overlaps_view(console, response.get("overlaps", []))
            if meeting:
                views.meeting_view(console, meeting)
            for option in options if negotiating else []:
                console.print(f"  {option['label']:<10} {option['command']}", markup=False)

        session.emit({**response, "options": options}, text)
        return EXIT_OVERLAP if negotiating else 0

    run(ctx, json_flag, body)


PathOpt = Annotated[list[str] | None, typer.Option("--path", "-p", help="Path pattern.")]


@scope_app.command("add")
def scope_add(
    ctx: typer.Context,
    claim_id: ClaimId,
    path: PathOpt = None,
    module: Annotated[
        list[str] | None,
        typer.Option(
            "--module",
            help="Module to add (repeatable): a Python dotted name (detente.storage), a Go "
            "package or JS/TS directory (internal/storage); it covers its files and submodules.",
        ),
    ] = None,
    symbol: Annotated[
        list[str] | None,
        typer.Option(
            "--symbol",
            help="Symbol to add (repeatable): path::Qualified.name (src/x.py::Retry.backoff), "
            "or a bare qualified name resolved at the base commit (ambiguous: exit 2 with "
            "the candidates).",
        ),
    ] = None,
    contract: Annotated[
        list[str] | None,
        typer.Option("--contract", help="Expected contract change: TYPE:AREA:CHANGE, or AREA."),
    ] = None,
    reason: Reason = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Widen a claim. Contested additions wait in pendingPaths while negotiating (exit 6)."""
    from detente.client.seeds import contract_seed

    _scope_change(
        ctx,
        json_flag,
        claim_id,
        expect_revision,
        add_paths=path or (),
        add_modules=module or (),
        add_symbols=symbol or (),
        add_expected_contract_changes=[contract_seed(c) for c in contract or ()],
        reason=reason,
    )


@scope_app.command("remove")
def scope_remove(
    ctx: typer.Context,
    claim_id: ClaimId,
    path: PathOpt = None,
    module: Annotated[
        list[str] | None, typer.Option("--module", help="A module the claim holds.")
    ] = None,
    symbol: Annotated[
        list[str] | None,
        typer.Option("--symbol", help="A symbol the claim holds (path::Name, or Name if unique)."),
    ] = None,
    reason: Reason = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Narrow a claim (never negotiates): drop paths, modules or symbols it holds.

    Naming a target the claim does not hold is refused with exit 2 and changes nothing.
    A claim must keep at least one target: removing its only path (and it names no
    module, symbol, contract or memory file) is refused with exit 2 and changes nothing.
    To give up the last target, release the claim with ``detente claim abandon`` (or
    finish it with ``detente claim complete``). Claims waiting on the removed targets
    become active in the same step.
    """
    _scope_change(
        ctx,
        json_flag,
        claim_id,
        expect_revision,
        remove_paths=path or (),
        remove_modules=module or (),
        remove_symbols=symbol or (),
        reason=reason,
    )


# ---------------------------------------------------------------------------- reading


@claim_app.command("status")
def status(
    ctx: typer.Context,
    claim_id: ClaimId,
    work: Annotated[
        bool,
        typer.Option("--work", help="Also read the claim's git work (branch head, commits)."),
    ] = False,
    semantic: Annotated[
        bool,
        typer.Option("--semantic", help="Also list advisory semantic overlaps (slower)."),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """A claim now: live overlaps, lease timer, meeting, and the evidence completion needs."""
    from detente.cli.claim_reads import status_body

    run(ctx, json_flag, status_body(claim_id, work=work, semantic=semantic))


@claim_app.command("list")
def list_(
    ctx: typer.Context,
    status_filter: Annotated[str | None, typer.Option("--status", help="Only this status.")] = None,
    path: Annotated[str | None, typer.Option("--path", help="Only claims covering it.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id or name.")] = None,
    agent_session: Annotated[
        str | None, typer.Option("--session", help="Only claims of this agent session id.")
    ] = None,
    repo: Annotated[
        str | None, typer.Option("--repo", help="Repository name (default: all served).")
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, max=1000, help="At most this many (one page)."),
    ] = None,
    cursor: Annotated[
        str | None, typer.Option("--cursor", help="Continue after a page (its nextCursor).")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """List claims (newest last); with --limit, one page at a time."""
    from detente.cli.claim_reads import list_body

    body = list_body(
        status=status_filter,
        path=path,
        agent=agent,
        agent_session=agent_session,
        repo=repo,
        limit=limit,
        cursor=cursor,
    )
    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- status moves


def _status_move(
    ctx: typer.Context,
    json_flag: bool,
    claim_id: str,
    action: str,
    expect: int | None,
    reason: str | None,
) -> None:
    def body(session: Session) -> None:
        revision = expect if expect is not None else _read(session, claim_id)["revision"]
        method = session.client.suspend if action == "suspend" else session.client.resume
        response = method(claim_id, expected_claim_revision=revision, reason=reason)
        claim = response["claim"]
        session.emit(
            response,
            lambda console: console.print(
                f"{claim['id']}: {claim['status']} (revision {claim['revision']})"
            ),
        )

    run(ctx, json_flag, body)


def _status_command(action: str, summary: str) -> None:
    """Register ``claim <action>`` (suspend or resume): one status move, same flags."""

    def command(
        ctx: typer.Context,
        claim_id: ClaimId,
        reason: Reason = None,
        expect_revision: ExpectRevision = None,
        json_flag: JsonFlag = False,
    ) -> None:
        _status_move(ctx, json_flag, claim_id, action, expect_revision, reason)

    command.__doc__ = summary
    claim_app.command(action)(command)


_status_command("suspend", "Pause a claim (its lease keeps running: keep renewing).")
_status_command("resume", "Resume a suspended claim.")


@claim_app.command("abandon")
def abandon(
    ctx: typer.Context,
    claim_id: ClaimId,
    reason: Reason = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Release a claim, recording its head commit and diff summary from its worktree.

    The worktree and branch are kept (they hold the work); remove them with git when done.
    """

    def body(session: Session) -> None:
        from detente.cli.workspace import release_record

        current = _read(session, claim_id)
        head, summary = release_record(current)
        response = session.client.abandon(
            claim_id,
            expected_claim_revision=(
                expect_revision if expect_revision is not None else current["revision"]
            ),
            head_commit=head,
            diff_summary=summary,
            reason=reason,
        )
        claim = response["claim"]

        def text(console: Console) -> None:
            console.print(f"{claim['id']}: {claim['status']} (revision {claim['revision']})")
            if summary:
                console.print(
                    f"  recorded head {str(head)[:12]}, {len(summary['files'])} files changed, "
                    f"+{summary['insertions']} -{summary['deletions']}"
                )
            if claim.get("worktree"):
                console.print(f"  worktree kept: {claim['worktree']}", markup=False)

        session.emit(response, text)

    run(ctx, json_flag, body)


# ``claim complete`` (evidence gathered in the worktree) lives in ``integrate.py``.
