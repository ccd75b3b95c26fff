"""``detente config show``: the effective project configuration and where each value came from.

The configuration is the repository's ``detente.toml`` (see :mod:`detente.config`) with
the policy flags that ``detente serve`` also takes (``--policy FILE``,
``--meeting-deadline``, ``--takeover-grace``, ``--min-ttl``, ``--max-ttl``) applied on
top; each value's source is ``default``, the file, or the flag. The flag types live here
so ``serve`` and ``config show`` describe them once. :mod:`detente.config` is imported
only when a command runs (the CLI must start fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run

if TYPE_CHECKING:
    from rich.console import Console

    from detente.config import ProjectConfig

__all__ = [
    "MaxTtlFlag",
    "MeetingDeadlineFlag",
    "MinTtlFlag",
    "PolicyFileFlag",
    "TakeoverGraceFlag",
    "config_app",
    "policy_overrides",
    "project_config",
]

config_app = typer.Typer(
    help="The project configuration (detente.toml at the repository root).",
    no_args_is_help=True,
)

PolicyFileFlag = Annotated[
    Path | None,
    typer.Option(
        "--policy",
        metavar="FILE",
        help="Read this TOML file instead of the repository's detente.toml.",
    ),
]
MeetingDeadlineFlag = Annotated[
    int | None,
    typer.Option(
        "--meeting-deadline",
        metavar="SECONDS",
        help="Seconds an overlap meeting stays open before it escalates to a human "
        "(default: detente.toml's policy.meeting-deadline-seconds, else 900).",
    ),
]
TakeoverGraceFlag = Annotated[
    int | None,
    typer.Option(
        "--takeover-grace",
        metavar="SECONDS",
        help="Seconds after a lease expires before its claim may be taken over "
        "(default: policy.takeover-grace-seconds, else 30).",
    ),
]
MinTtlFlag = Annotated[
    int | None,
    typer.Option(
        "--min-ttl",
        metavar="SECONDS",
        help="Shortest lease TTL accepted (default: policy.min-ttl-seconds, else 1).",
    ),
]
MaxTtlFlag = Annotated[
    int | None,
    typer.Option(
        "--max-ttl",
        metavar="SECONDS",
        help="Longest lease TTL accepted (default: policy.max-ttl-seconds, else 604800).",
    ),
]


def policy_overrides(
    meeting_deadline: int | None,
    takeover_grace: int | None,
    min_ttl: int | None,
    max_ttl: int | None,
) -> dict[str, tuple[Any, str]]:
    """The policy flags given, as :func:`detente.config.load_config` overrides."""
    given = {
        "policy.meeting-deadline-seconds": (meeting_deadline, "--meeting-deadline"),
        "policy.takeover-grace-seconds": (takeover_grace, "--takeover-grace"),
        "policy.min-ttl-seconds": (min_ttl, "--min-ttl"),
        "policy.max-ttl-seconds": (max_ttl, "--max-ttl"),
    }
    return {key: (value, flag) for key, (value, flag) in given.items() if value is not None}


def project_config(
    repo: Path, file: Path | None, overrides: dict[str, tuple[Any, str]]
) -> ProjectConfig:
    """The configuration of the repository containing ``repo``, flags applied.

    Raises:
        ValidationError: ``validation_error`` for an invalid file or flag value.
    """
    from detente.runtime import load_project_config

    return load_project_config(repo, file=file, overrides=overrides)


@config_app.command("show")
def show(
    ctx: typer.Context,
    policy: PolicyFileFlag = None,
    meeting_deadline: MeetingDeadlineFlag = None,
    takeover_grace: TakeoverGraceFlag = None,
    min_ttl: MinTtlFlag = None,
    max_ttl: MaxTtlFlag = None,
    json_flag: JsonFlag = False,
) -> None:
    """Print the effective configuration and where each value came from.

    Sources are ``default``, ``detente.toml`` (or the ``--policy`` file) and the flag
    that set a value. Give the flags you would give ``detente serve`` to see what it
    would enforce. Exit 2 with the file, key and expected value when the file is invalid.
    """

    def body(session: Session) -> None:
        from detente.config import effective

        overrides = policy_overrides(meeting_deadline, takeover_grace, min_ttl, max_ttl)
        config = project_config(session.settings.repo, policy, overrides)
        values = effective(config)
        data = config.to_wire(values)

        def text(console: Console) -> None:
            where = f"read {config.file}" if config.file else "no detente.toml: defaults"
            console.print(where, markup=False)
            width = max(len(k) for k in values)
            column = max(len(config.source(k)) for k in values)
            for key, value in values.items():
                console.print(
                    f"{key:<{width}}  {config.source(key):<{column}}  {_shown(value)}",
                    markup=False,
                    highlight=False,
                )

        session.out.emit(data, text)

    run(ctx, json_flag, body)


def _shown(value: Any) -> str:
    if value is None:
        return "unlimited"
    if isinstance(value, list):
        return ", ".join(value) if value else "(none)"
    return str(value)
