"""The ``detente`` command line.

Commands talk to a detente server (``--server URL`` / ``$DETENTE_URL``, or one found on
``http://127.0.0.1:7420`` that serves the current repository) or, when there is none, run
the same HTTP app in-process on the repository's SQLite store (*local mode*; force it
with ``--local`` / ``$DETENTE_LOCAL=1``). Either way the records, errors and exit codes
are the same; ``--json`` output names the ``mode``.

Exit codes (one table, ``render.EXIT_CODES``)::

    0 ok                         5 lease_expired
    1 unexpected (or vcs_error)  6 overlap: claim opened but negotiating
    2 usage / validation_error   7 invalid_transition
    3 not_found                  8 other conflict (branch_in_use, stale_base, ...)
    4 revision_conflict          9 server or store unavailable

Start-up stays fast: this module imports only typer and the standard library; httpx,
rich, FastAPI and uvicorn are imported inside the commands that need them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.claims import claim_app
from detente.cli.config_commands import (
    MaxTtlFlag,
    MeetingDeadlineFlag,
    MinTtlFlag,
    PolicyFileFlag,
    TakeoverGraceFlag,
    config_app,
)
from detente.cli.context import JsonFlag, Session, Settings, run
from detente.cli.dashboard import dashboard_command
from detente.cli.deploy import deploy as deploy_command
from detente.cli.hooks import hooks_app
from detente.cli.index_commands import register as register_index_commands
from detente.cli.integrate import register as register_integration_commands
from detente.cli.mcp import mcp_command
from detente.cli.meetings import meeting_app
from detente.cli.memory import memory_app
from detente.cli.patch import patch_app
from detente.cli.render import EXIT_CODES_HELP
from detente.cli.takeover import register as register_takeover_commands

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["app", "main"]

app = typer.Typer(
    name="detente",
    help="Coordinate AI coding agents in one git repository: claims, leases, revisions, evidence.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
)
events_app = typer.Typer(help="The append-only event log.", no_args_is_help=True)
audit_app = typer.Typer(help="Verify the hash chain and the projections.", no_args_is_help=True)
app.add_typer(claim_app, name="claim")
app.add_typer(events_app, name="events")
app.add_typer(audit_app, name="audit")
app.add_typer(memory_app, name="memory")
app.add_typer(meeting_app, name="meeting")
register_takeover_commands(claim_app)
register_integration_commands(app, claim_app)
app.add_typer(patch_app, name="patch")
app.add_typer(hooks_app, name="hooks")
app.add_typer(config_app, name="config")
app.command("deploy")(deploy_command)
app.command("mcp")(mcp_command)
app.command("dashboard")(dashboard_command)
register_index_commands(app)


@app.callback()
def _global(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            envvar="DETENTE_URL",
            help="detente server URL [default: http://127.0.0.1:7420 if it serves this "
            "repository, else local mode].",
        ),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="A directory inside the repository [default: cwd]."),
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            envvar="DETENTE_LOCAL",
            help="Work in-process on the repository's own store; never use a server.",
        ),
    ] = False,
    json_flag: JsonFlag = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Say which server or store is used.")
    ] = False,
) -> None:
    ctx.obj = Settings(
        server=server,
        repo=(repo or Path.cwd()).absolute(),
        json=json_flag,
        local=local,
        verbose=verbose,
    )


# ---------------------------------------------------------------------------- serve


@app.command()
def serve(
    ctx: typer.Context,
    repo: Annotated[
        list[Path] | None,
        typer.Option("--repo", help="Repository to serve (repeatable) [default: the global one]."),
    ] = None,
    name: Annotated[
        list[str] | None,
        typer.Option("--name", help="Name of the matching --repo [default: its directory name]."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Store URL [default: $DETENTE_STORE or the first repository's SQLite file].",
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Loopback interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port.")] = 7420,
    log_level: Annotated[
        str,
        typer.Option(
            "--log-level",
            help="Server log on stderr: debug, info (one line per request), warning, error.",
        ),
    ] = "info",
    max_body_bytes: Annotated[
        int,
        typer.Option("--max-body-bytes", help="Largest request body accepted (413 beyond)."),
    ] = 1 << 20,
    policy: PolicyFileFlag = None,
    meeting_deadline: MeetingDeadlineFlag = None,
    takeover_grace: TakeoverGraceFlag = None,
    min_ttl: MinTtlFlag = None,
    max_ttl: MaxTtlFlag = None,
    json_flag: JsonFlag = False,
) -> None:
    """Run the detente server (HTTP API, event stream, live dashboard at /) until interrupted.

    Only loopback hosts are accepted: authentication is not available yet. The log
    (stderr) has one line per request and every background task failure, with
    structured ``key=value`` fields. The policy is the first repository's detente.toml
    with the policy flags applied (see ``detente config show``).
    """

    def body(session: Session) -> None:
        from detente import runtime
        from detente.cli.config_commands import policy_overrides
        from detente.cli.serving import bind, check_loopback, serve
        from detente.errors import ValidationError
        from detente.logs import LEVELS
        from detente.storage.factory import display_url

        check_loopback(host)
        if log_level.lower() not in LEVELS:
            raise ValidationError(
                f"--log-level must be one of {', '.join(LEVELS)}", field="log-level"
            )
        if max_body_bytes < 1:
            raise ValidationError("--max-body-bytes must be positive", field="max-body-bytes")
        paths = list(repo or [session.settings.repo])
        service = runtime.build_service(
            paths,
            names=list(name or ()),
            store_url=store,
            config_file=policy,
            config_overrides=policy_overrides(meeting_deadline, takeover_grace, min_ttl, max_ttl),
        )
        sock, url = bind(host, port)
        described: dict[str, Any] = {
            "listening": url,
            "repos": [
                {"name": r.name, "path": str(r.path), "defaultBranch": r.default_branch}
                for r in service.list_repos()
            ],
            "store": display_url(runtime.resolve_store_url(paths[0], store)),
        }

        def text(console: Console) -> None:
            from rich.markup import escape

            console.print(f"detente listening on [bold]{url}[/] (Ctrl-C to stop)")
            console.print(f"  dashboard {url}/")
            for r in described["repos"]:
                console.print(f"  repo  {escape(r['name'])}  {escape(r['path'])}")
            console.print(f"  store {escape(described['store'])}")

        session.out.emit(described, text)
        try:
            serve(service, sock, log_level=log_level, max_body_bytes=max_body_bytes)
        finally:
            service.store.close()
        if not session.out.json_mode:
            session.out.err.print("detente server stopped")

    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- events, audit


@events_app.command("watch")
def events_watch(
    ctx: typer.Context,
    since: Annotated[
        int | None,
        typer.Option("--since", help="Start after this sequence [default: only new events]."),
    ] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="Only this repository.")] = None,
    count: Annotated[
        int | None, typer.Option("--count", min=1, help="Exit after this many events.")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Follow the event stream: one line per event (JSON lines with --json).

    Resumes with Last-Event-ID after a dropped connection, so no event is lost or
    repeated.
    """

    def body(session: Session) -> None:
        import json

        from detente.cli.views import event_line

        out = session.out

        def reconnecting(position: int, reason: str) -> None:
            out.err.print(f"[dim]reconnecting after #{position}: {reason}[/]", markup=True)

        seen = 0
        for message in session.client.watch(since=since, repo=repo, on_reconnect=reconnecting):
            if message.event == "resync":
                out.err.print(f"resync: {message.data}", markup=False)
                continue
            event = json.loads(message.data)
            if out.json_mode:
                out.json(event)
            else:
                out.console.print(event_line(event), markup=False)
            seen += 1
            if count is not None and seen >= count:
                return

    run(ctx, json_flag, body)


@audit_app.command("verify")
def audit_verify(ctx: typer.Context, json_flag: JsonFlag = False) -> None:
    """Check the hash chain and that projections equal a full replay (exit 1 if not)."""

    def body(session: Session) -> int:
        from detente.cli.views import audit_view

        report = session.client.audit_verify()
        session.emit(report, lambda console: audit_view(console, report))
        return 0 if report.get("ok") else 1

    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- demo


@app.command()
def demo(
    ctx: typer.Context,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo",
            help="Repository URL or path to clone [default: detente's own checkout, else "
            "the current repository].",
        ),
    ] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the temporary clone.")] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Run the end-to-end story on a throwaway clone: three agents, one overlap, one expiry.

    Starts a real server on a free loopback port, opens claims in their own worktrees,
    renews leases, lets one expire, streams the events and verifies the audit log.
    """

    def body(session: Session) -> int:
        from detente.cli.demo import run_demo, source_repository

        source = repo or source_repository(session.settings.repo)
        summary = run_demo(source, out=session.out, keep=keep)
        if session.out.json_mode:
            session.out.json(summary)
        return 0 if summary["ok"] else 1

    run(ctx, json_flag, body)


def main() -> None:
    """Console entry point (``detente``).

    Usage errors (a missing option, a value of the wrong type) are click's, raised before
    any command runs; with ``--json`` they are still one problem document on stdout, with
    exit code 2, as every other error is.
    """
    import sys

    if "--json" not in sys.argv[1:]:
        app(prog_name="detente")
        return
    import json

    import typer

    try:
        # Without standalone mode click returns a command's exit code instead of exiting.
        code = app(prog_name="detente", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except Exception as exc:  # typer's vendored click UsageError family
        format_message = getattr(exc, "format_message", None)
        if format_message is None or getattr(exc, "exit_code", None) != 2:
            raise
        problem = {"code": "validation_error", "detail": format_message(), "exitCode": 2}
        print(json.dumps(problem))
        sys.exit(2)
