"""``detente serve``, ``events watch``, ``audit verify`` and ``demo``: the commands about
the server and the log as a whole (loaded only when one of them runs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli import auth_flags as af
from detente.cli.config_commands import (
    MaxTtlFlag,
    MeetingDeadlineFlag,
    MinTtlFlag,
    PolicyFileFlag,
    TakeoverGraceFlag,
)
from detente.cli.context import JsonFlag, Session, run

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["audit_app", "demo", "events_app", "serve"]

events_app = typer.Typer(help="The append-only event log.", no_args_is_help=True)
audit_app = typer.Typer(help="Verify the hash chain and the projections.", no_args_is_help=True)


# ---------------------------------------------------------------------------- serve


def serve(
    ctx: typer.Context,
    repo: Annotated[
        list[Path] | None,
        typer.Option("--repo", help="Repository to serve (repeatable) (default: the global one)."),
    ] = None,
    name: Annotated[
        list[str] | None,
        typer.Option("--name", help="Name of the matching --repo (default: its directory name)."),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Store URL (default: $DETENTE_STORE or the first repository's SQLite file).",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option("--host", help="Interface to bind (non-loopback needs --auth and TLS).")
    ] = "127.0.0.1",
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
    auth: af.AuthFlag = None,
    oidc_issuer: af.OidcIssuerFlag = None,
    oidc_audience: af.OidcAudienceFlag = None,
    oidc_principal_claim: af.OidcPrincipalClaimFlag = "sub",
    oidc_groups_claim: af.OidcGroupsClaimFlag = "groups",
    oidc_max_token_lifetime: af.OidcMaxLifetimeFlag = None,
    tls_cert: af.TlsCertFlag = None,
    tls_key: af.TlsKeyFlag = None,
    behind_proxy: af.BehindProxyFlag = False,
    allowed_origin: af.AllowedOriginFlag = None,
    public_url: af.PublicUrlFlag = None,
    json_flag: JsonFlag = False,
) -> None:
    """Run the detente server (HTTP API, event stream, live dashboard at /) until interrupted.

    Without --auth only loopback hosts are accepted and every caller is principal
    'local' with every role; another --host needs --auth and --tls-cert/--tls-key or
    --behind-proxy (see 'Running detente for a team' in the README). The log
    (stderr) has one line per request and every background task failure, with
    structured ``key=value`` fields. The policy is the first repository's detente.toml
    with the policy flags applied (see ``detente config show``).
    """

    def body(session: Session) -> None:
        from detente import runtime
        from detente.cli.config_commands import policy_overrides
        from detente.cli.serving import bind, serve
        from detente.errors import ValidationError
        from detente.logs import LEVELS
        from detente.security.ratelimit import RateLimiter
        from detente.storage.factory import display_url

        exposure = af.exposure(
            host,
            auth=auth,
            oidc_issuer=oidc_issuer,
            oidc_audience=oidc_audience,
            oidc_principal_claim=oidc_principal_claim,
            oidc_groups_claim=oidc_groups_claim,
            oidc_max_lifetime=oidc_max_token_lifetime,
            tls_cert=tls_cert,
            tls_key=tls_key,
            behind_proxy=behind_proxy,
            allowed_origins=allowed_origin,
            public_url=public_url,
        )
        if log_level.lower() not in LEVELS:
            raise ValidationError(
                f"--log-level must be one of {', '.join(LEVELS)}", field="log-level"
            )
        if max_body_bytes < 1:
            raise ValidationError("--max-body-bytes must be positive", field="max-body-bytes")
        paths = list(repo or [session.settings.repo])
        config = runtime.load_project_config(
            paths[0],
            file=policy,
            overrides=policy_overrides(meeting_deadline, takeover_grace, min_ttl, max_ttl),
        )
        service = runtime.build_service(
            paths, names=list(name or ()), store_url=store, config=config
        )
        gate = af.build_gate(
            exposure,
            roles=config.roles,
            keys=af.key_verifier(exposure, service, paths[0]),
            limiter=RateLimiter(config.limits, service.clock.now),
        )
        sock, url = bind(host, port)
        url = url.replace("http://", f"{exposure.scheme}://", 1)
        described: dict[str, Any] = {
            "listening": url,
            "auth": list(exposure.modes),
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
            serve(
                service,
                sock,
                log_level=log_level,
                max_body_bytes=max_body_bytes,
                exposure=exposure,
                auth=gate,
            )
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
        typer.Option("--since", help="Start after this sequence (default: only new events)."),
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
def audit_verify(
    ctx: typer.Context,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Replay from event 1 (default: from where the last passing audit stopped).",
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Check the hash chain, that projections equal a replay, and the store against its
    signed checkpoints and the landings on the default branch (exit 1 if not). A second
    run checks only the events appended since the last one that passed."""

    def body(session: Session) -> int:
        from detente.cli.views import audit_view

        report = session.client.audit_verify(full=full)
        session.emit(report, lambda console: audit_view(console, report))
        return 0 if report.get("ok") else 1

    run(ctx, json_flag, body)


# ---------------------------------------------------------------------------- demo


def demo(
    ctx: typer.Context,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo",
            help="Repository URL or path to clone (default: detente's own checkout, else "
            "the current repository).",
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
