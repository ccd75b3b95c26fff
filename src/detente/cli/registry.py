"""How each top-level command joins the CLI: one registrar per entry of
:data:`detente.cli.main.COMMANDS`, run only when that command is used.

A registrar adds its command (or group) to the Typer app it is given, exactly as the
eager CLI used to at import time; :mod:`detente.cli.lazy_group` runs it on a throwaway
app, once per process, and takes the command out by name. Several entries may share one
registrar (``reconcile``, ``symbols`` and ``search`` come from one module).
"""

from __future__ import annotations

import typer

__all__ = [
    "agents",
    "audit",
    "claim",
    "config",
    "dashboard",
    "demo",
    "deploy",
    "events",
    "hooks",
    "index",
    "init",
    "integrate",
    "mcp",
    "meeting",
    "memory",
    "patch",
    "resource",
    "serve",
]


def claim(app: typer.Typer) -> None:
    from detente.cli.claim_merge_check import merge_check
    from detente.cli.claim_objective import objective
    from detente.cli.claims import claim_app
    from detente.cli.integrate import register as register_integration
    from detente.cli.takeover import register as register_takeover

    register_takeover(claim_app)
    claim_app.command("objective")(objective)
    claim_app.command("merge-check")(merge_check)
    register_integration(typer.Typer(), claim_app)  # ``claim complete``; ``integrate`` is its own
    app.add_typer(claim_app, name="claim")


def agents(app: typer.Typer) -> None:
    from detente.cli.agents import agents_app

    app.add_typer(agents_app, name="agents")


def config(app: typer.Typer) -> None:
    from detente.cli.config_commands import config_app

    app.add_typer(config_app, name="config")


def init(app: typer.Typer) -> None:
    from detente.cli.init_command import init as init_command

    app.command("init")(init_command)


def integrate(app: typer.Typer) -> None:
    from detente.cli.integrate import register as register_integration

    register_integration(app, typer.Typer())  # ``integrate``; ``claim complete`` is in ``claim``


def events(app: typer.Typer) -> None:
    from detente.cli.server_commands import events_app

    app.add_typer(events_app, name="events")


def audit(app: typer.Typer) -> None:
    from detente.cli.server_commands import audit_app

    app.add_typer(audit_app, name="audit")


def serve(app: typer.Typer) -> None:
    from detente.cli.server_commands import serve as serve_command

    app.command("serve")(serve_command)


def demo(app: typer.Typer) -> None:
    from detente.cli.server_commands import demo as demo_command

    app.command("demo")(demo_command)


def memory(app: typer.Typer) -> None:
    from detente.cli.memory import memory_app

    app.add_typer(memory_app, name="memory")


def meeting(app: typer.Typer) -> None:
    from detente.cli.meetings import meeting_app

    app.add_typer(meeting_app, name="meeting")


def patch(app: typer.Typer) -> None:
    from detente.cli.patch import patch_app

    app.add_typer(patch_app, name="patch")


def hooks(app: typer.Typer) -> None:
    from detente.cli.hooks import hooks_app

    app.add_typer(hooks_app, name="hooks")


def principal(app: typer.Typer) -> None:
    from detente.cli.principals import principal_app

    app.add_typer(principal_app, name="principal")


def deploy(app: typer.Typer) -> None:
    from detente.cli.deploy import deploy as deploy_command

    app.command("deploy")(deploy_command)


def resource(app: typer.Typer) -> None:
    from detente.cli.resources import resource_app

    app.add_typer(resource_app, name="resource")


def mcp(app: typer.Typer) -> None:
    from detente.cli.mcp import mcp_command

    app.command("mcp")(mcp_command)


def dashboard(app: typer.Typer) -> None:
    from detente.cli.dashboard import dashboard_command

    app.command("dashboard")(dashboard_command)


def index(app: typer.Typer) -> None:
    from detente.cli.index_commands import register as register_index_commands

    register_index_commands(app)
