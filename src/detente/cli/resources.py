"""``detente resource acquire|renew|release|list|show|next|declare``: shared resources.

A resource is a thing that is not a file and that several agents must not use at once
beyond its capacity: ``build`` (2 slots), ``db:test``, ``port:5432``, ``deploy:staging``.
``acquire`` takes a slot for a TTL and prints its fencing token; keep it with
``renew`` (a heartbeat) and give it back with ``release``. A full resource refuses at once
(``resource_busy``, exit 8) unless ``--wait``: the request then waits in line (first come,
first granted) until a slot frees for it (its ``resource.granted`` event), or leaves the
line after ``--timeout`` seconds (exit 8). ``next`` hands out a
counter's next number exactly once (``detente resource next migrations`` -> ``0042``).

Capacity is declared in the log, so every server on one store agrees on it: by the first
acquire (``--capacity``, default 1) or by ``declare`` (changing an existing capacity needs
``admin``).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import DetenteError, ResourceBusy, ValidationError

if TYPE_CHECKING:
    from rich.console import Console

    from detente.client import Client

__all__ = ["resource_app"]

resource_app = typer.Typer(
    help="Shared resources (build slots, test databases, ports, migration numbers): "
    "counted leases with fencing tokens.",
    no_args_is_help=True,
)

Name = Annotated[str, typer.Argument(help="Resource name, e.g. build, db:test, port:5432.")]
RepoName = Annotated[
    str | None, typer.Option("--repo-name", help="Repository name (default: this one).")
]
Token = Annotated[
    int | None, typer.Option("--token", help="The grant's fencing token (from acquire).")
]
LeaseRevision = Annotated[
    int | None,
    typer.Option(
        "--lease-revision",
        help="The lease revision you read (default: read the grant now, then compare-and-swap).",
    ),
]
#: Seconds between reads of the resource while ``acquire --wait`` waits in line.
POLL_SECONDS = 1.0

Ttl = Annotated[int, typer.Option("--ttl", metavar="SECONDS", help="Lease TTL in seconds.")]


def _repo(session: Session, repo: str | None) -> str:
    return repo or session.repo_name


def _holder_line(grant: Mapping[str, Any], session: Session) -> str:
    from detente.cli.render import lease_timer

    said = " ".join(
        part
        for part in (
            f"session {grant['sessionId']}" if grant.get("sessionId") else "",
            f"claim {grant['claimId']}" if grant.get("claimId") else "",
            repr(grant["note"]) if grant.get("note") else "",
        )
        if part
    )
    return (
        f"  token {grant['fencingToken']}  {grant['principal']}  "
        f"{lease_timer(grant['expiresAt'], session.now())}  lease revision "
        f"{grant['leaseRevision']}" + (f"  {said}" if said else "")
    )


def _print_resource(console: Console, resource: Mapping[str, Any], session: Session) -> None:
    console.print(
        f"{resource['name']}: {len(resource['holders'])} of {resource['capacity']} held, "
        f"{len(resource['waiters'])} waiting"
        + (f", last number {resource['lastNumber']:04d}" if resource["lastNumber"] else ""),
        markup=False,
    )
    for grant in resource["holders"]:
        console.print(_holder_line(grant, session), markup=False)
    for waiter in resource["waiters"]:
        console.print(
            f"  #{waiter['position']} {waiter['principal']} waits (ticket {waiter['ticket']})",
            markup=False,
        )


def _await_grant(
    client: Client, name: str, repo: str, ticket: str, timeout: float
) -> dict[str, Any] | None:
    """The grant of ``ticket`` once it is made (None after ``timeout`` seconds).

    The command reads the resource again every :data:`POLL_SECONDS` (a read is one
    indexed query; it also runs the server's expiry, so a holder that stopped renewing
    frees its slot on time). A long-lived agent follows the event stream instead and
    learns its turn from the ``resource.granted`` event naming its ticket."""
    deadline = time.monotonic() + timeout
    while True:
        holders = client.get_resource(name, repo=repo)["resource"]["holders"]
        grant = next((dict(g) for g in holders if g["ticket"] == ticket), None)
        left = deadline - time.monotonic()
        if grant is not None or left <= 0:
            return grant
        time.sleep(min(POLL_SECONDS, left))


@resource_app.command("acquire")
def acquire(
    ctx: typer.Context,
    name: Name,
    ttl: Ttl = 300,
    capacity: Annotated[
        int | None,
        typer.Option("--capacity", help="Slots of a new resource (default 1); must match."),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Wait in line for a slot instead of exit 8.")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option("--timeout", metavar="SECONDS", help="With --wait: leave the line after."),
    ] = 600.0,
    session_id: Annotated[
        str | None, typer.Option("--session", help="The agent session the slot is for.")
    ] = None,
    claim_id: Annotated[
        str | None, typer.Option("--claim", help="The claim the slot is for.")
    ] = None,
    note: Annotated[str, typer.Option("--note", help="What the slot is for.")] = "",
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Take a slot of NAME for --ttl seconds and print its fencing token (exit 8: busy)."""

    def body(session: Session) -> int | None:
        if not math.isfinite(timeout) or timeout < 0:
            raise ValidationError(
                f"--timeout must be a finite number of seconds >= 0, got {timeout:g}",
                field="timeout",
            )
        repo_name = _repo(session, repo)
        request: dict[str, Any] = {
            "repo": repo_name,
            "ttlSeconds": ttl,
            "capacity": capacity,
            "wait": wait,
            "sessionId": session_id,
            "claimId": claim_id,
            "note": note,
        }
        answer: dict[str, Any] = dict(session.client.acquire_resource(name, request))
        waiting = answer.get("waiting")
        if answer.get("grant") is None and waiting:
            if not session.out.json_mode:
                session.out.progress(
                    f"{name} is full: waiting in line at #{waiting['position']} "
                    f"(ticket {waiting['ticket']})"
                )
            leave = {"repo": repo_name, "ticket": waiting["ticket"]}
            try:
                grant = _await_grant(session.client, name, repo_name, waiting["ticket"], timeout)
            except BaseException:
                # Interrupted (Ctrl-C): leave the line, or a later grant would hold a slot
                # for its whole TTL with nobody renewing or releasing it.
                with contextlib.suppress(DetenteError):
                    session.client.release_resource(name, leave)
                raise
            if grant is None:
                session.client.release_resource(name, leave)
                raise ResourceBusy(
                    f"no slot of {name} within {timeout:g} seconds: left the line",
                    resource=name,
                )
            answer = {**answer, "grant": grant, "waiting": None}
        granted: Mapping[str, Any] = answer["grant"]

        def text(console: Console) -> None:
            console.print(
                f"{name}: granted, fencing token {granted['fencingToken']} "
                f"(lease revision {granted['leaseRevision']}); renew with "
                f"`detente resource renew {name} --token {granted['fencingToken']}`",
                markup=False,
            )
            console.print(_holder_line(granted, session), markup=False)

        session.emit(answer, text)
        return None

    run(ctx, json_flag, body)


def _lease_revision(
    session: Session, name: str, repo: str, token: int, given: int | None
) -> int | None:
    """``given``, else the grant's lease revision read now (None: the token holds nothing,
    so the decision refuses it with the right code)."""
    if given is not None:
        return given
    holders = session.client.get_resource(name, repo=repo)["resource"]["holders"]
    return next((g["leaseRevision"] for g in holders if g["fencingToken"] == token), None)


@resource_app.command("renew")
def renew(
    ctx: typer.Context,
    name: Name,
    token: Token = None,
    lease_revision: LeaseRevision = None,
    ttl: Ttl = 300,
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Heartbeat: extend the grant --token of NAME by --ttl seconds (exit 5: expired)."""

    def body(session: Session) -> None:
        if token is None:
            raise ValidationError("name the grant: --token N (from acquire)", field="token")
        repo_name = _repo(session, repo)
        revision = _lease_revision(session, name, repo_name, token, lease_revision)
        answer = session.client.renew_resource(
            name,
            {
                "repo": repo_name,
                "fencingToken": token,
                "expectedLeaseRevision": revision if revision is not None else 1,
                "ttlSeconds": ttl,
            },
        )
        grant = answer["grant"]
        assert grant is not None  # a renewal answers the grant it renewed

        def text(console: Console) -> None:
            console.print(f"{name}: renewed", markup=False)
            console.print(_holder_line(grant, session), markup=False)

        session.emit(answer, text)

    run(ctx, json_flag, body)


@resource_app.command("release")
def release(
    ctx: typer.Context,
    name: Name,
    token: Token = None,
    ticket: Annotated[
        str | None, typer.Option("--ticket", help="Leave the line instead (a waiting ticket).")
    ] = None,
    lease_revision: LeaseRevision = None,
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Give back the grant --token of NAME (or leave the line with --ticket)."""

    def body(session: Session) -> None:
        repo_name = _repo(session, repo)
        request: dict[str, Any] = {"repo": repo_name, "fencingToken": token, "ticket": ticket}
        if token is not None and lease_revision is not None:
            request["expectedLeaseRevision"] = lease_revision
        answer = session.client.release_resource(name, request)

        def text(console: Console) -> None:
            what = f"token {token} released" if token is not None else f"ticket {ticket} left"
            console.print(f"{name}: {what}", markup=False)
            _print_resource(console, answer["resource"], session)

        session.emit(answer, text)

    run(ctx, json_flag, body)


@resource_app.command("list")
def list_(ctx: typer.Context, repo: RepoName = None, json_flag: JsonFlag = False) -> None:
    """Every shared resource of this repository: capacity, holders, waiters."""

    def body(session: Session) -> None:
        answer = session.client.list_resources(repo=_repo(session, repo))

        def text(console: Console) -> None:
            if not answer["resources"]:
                console.print("no shared resources yet", markup=False)
            for resource in answer["resources"]:
                _print_resource(console, resource, session)

        session.emit(answer, text)

    run(ctx, json_flag, body)


@resource_app.command("show")
def show(
    ctx: typer.Context, name: Name, repo: RepoName = None, json_flag: JsonFlag = False
) -> None:
    """One resource: its holders (tokens, deadlines) and the line of waiters."""

    def body(session: Session) -> None:
        answer = session.client.get_resource(name, repo=_repo(session, repo))
        session.emit(answer, lambda console: _print_resource(console, answer["resource"], session))

    run(ctx, json_flag, body)


@resource_app.command("next")
def next_(
    ctx: typer.Context,
    name: Name,
    at_least: Annotated[
        int | None,
        typer.Option("--at-least", help="Start here if the counter is lower (existing files)."),
    ] = None,
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Print NAME's next number (e.g. 0042), handed out exactly once."""

    def body(session: Session) -> None:
        answer = session.client.next_number(
            name, {"repo": _repo(session, repo), "atLeast": at_least}
        )
        session.emit(answer, lambda console: console.print(answer["label"], markup=False))

    run(ctx, json_flag, body)


@resource_app.command("declare")
def declare(
    ctx: typer.Context,
    name: Name,
    capacity: Annotated[int, typer.Option("--capacity", help="Slots (1-1000).")],
    expected_revision: Annotated[
        int | None,
        typer.Option(
            "--expected-revision",
            help="The revision you read (0: a new resource; default: read it now).",
        ),
    ] = None,
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Declare NAME with --capacity slots, or change its capacity (admin)."""

    def body(session: Session) -> None:
        from detente.errors import NotFoundError

        repo_name = _repo(session, repo)
        revision = expected_revision
        if revision is None:
            try:
                revision = session.client.get_resource(name, repo=repo_name)["resource"]["revision"]
            except NotFoundError:
                revision = 0
        answer = session.client.declare_resource(
            name, {"repo": repo_name, "capacity": capacity, "expectedRevision": revision}
        )
        session.emit(answer, lambda console: _print_resource(console, answer["resource"], session))

    run(ctx, json_flag, body)
