"""``detente principal add|remove|list``: the agent keys a ``--auth keys`` server accepts.

The registry is ``principals.json`` beside the repository's default database (under the
common git directory, shared by every worktree, never committed); ``detente serve --auth
keys`` reads it and notices changes without a restart. An agent then signs its requests
with the private key (``DETENTE_KEY=path DETENTE_KEY_ID=NAME``). Adding and removing go
through the application layer (``admin``; in process, or ``--server URL``), which records
each change in the log (``principal.key_registered`` / ``principal.key_removed``) before
the file changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console

    from detente.security.signatures import KeyRegistry

__all__ = ["principal_app", "registry_for"]

principal_app = typer.Typer(
    help="Agent keys for signed requests (detente serve --auth keys).", no_args_is_help=True
)


def registry_for(repo: Path) -> KeyRegistry:
    """The key registry of the repository containing ``repo``."""
    from detente.security.signatures import KeyRegistry
    from detente.vcs import principals_path

    return KeyRegistry(principals_path(repo))


@principal_app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The principal (its requests' keyid).")],
    public_key: Annotated[
        Path,
        typer.Option(
            "--ed25519-public-key",
            metavar="FILE",
            help="The agent's Ed25519 public key (PEM or OpenSSH 'ssh-ed25519 ...').",
        ),
    ],
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role",
            help="Grant a role besides [roles] in detente.toml (repeatable): claim, "
            "integrate, deploy, arbitrate, admin.",
        ),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Register (or replace) NAME's public key; prints its SHA-256 fingerprint."""

    def body(session: Session) -> None:
        try:
            data = public_key.read_bytes()
        except OSError as exc:
            raise ValidationError(
                f"cannot read {public_key}: {exc.strerror or exc}", field="ed25519-public-key"
            ) from None
        text_key = data.decode("utf-8", errors="replace")
        entry = session.client.register_key(name, text_key, list(role or ()))["principal"]

        def text(console: Console) -> None:
            from rich.markup import escape

            console.print(f"registered [bold]{escape(entry['name'])}[/]")
            console.print(f"  fingerprint SHA256:{entry['fingerprint']}")
            if entry["roles"]:
                console.print(f"  roles {', '.join(entry['roles'])}")

        session.out.emit({"principal": entry}, text)

    run(ctx, json_flag, body)


@principal_app.command("remove")
def remove(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The principal whose key to remove.")],
    json_flag: JsonFlag = False,
) -> None:
    """Remove NAME's key: its signed requests are refused from then on (no restart)."""

    def body(session: Session) -> None:
        entry = session.client.remove_key(name)["principal"]

        def text(console: Console) -> None:
            from rich.markup import escape

            console.print(f"removed [bold]{escape(entry['name'])}[/]")
            console.print(f"  fingerprint SHA256:{entry['fingerprint']}")

        session.out.emit({"principal": entry}, text)

    run(ctx, json_flag, body)


@principal_app.command("list")
def list_principals(ctx: typer.Context, json_flag: JsonFlag = False) -> None:
    """The registered agent keys with their fingerprints."""

    def body(session: Session) -> None:
        entries = registry_for(session.settings.repo).list()

        def text(console: Console) -> None:
            from rich.markup import escape

            if not entries:
                console.print("no registered keys (detente principal add NAME --ed25519-...)")
            for e in entries:
                roles = f"  roles {', '.join(e.roles)}" if e.roles else ""
                console.print(f"{escape(e.name)}  SHA256:{e.fingerprint}{roles}")

        session.out.emit({"principals": [e.to_wire() for e in entries]}, text)

    run(ctx, json_flag, body)
