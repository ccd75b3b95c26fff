"""``detente hooks install [--bare BARE] [--warn]`` and ``detente hooks status``: the git
hooks of :mod:`detente.hooks`.

Without ``--bare`` the ``pre-commit`` guard goes into this repository's hooks directory
(shared by all its worktrees). With ``--bare BARE`` the ``pre-receive``, ``update`` and
``reference-transaction`` checks and the ``post-receive`` report go into the shared
repository ``BARE``; they ask the detente server named by the global ``--server URL`` /
``$DETENTE_URL`` (required: a bare repository has no local store). The old spelling
``--server BARE`` is refused with a message naming ``--bare``: ``--server`` is the
server's URL everywhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["hooks_app"]

hooks_app = typer.Typer(help="Git hooks that enforce claims.", no_args_is_help=True)


@hooks_app.command("install")
def install(
    ctx: typer.Context,
    server: Annotated[
        Path | None,
        typer.Option(
            "--bare",
            help="Install the server-side hooks (pre-receive, update, reference-transaction, "
            "post-receive) in this shared repository.",
        ),
    ] = None,
    old_server: Annotated[
        str | None,
        typer.Option(
            "--server",
            hidden=True,
            help="A detente server URL here (as the global --server); a path is refused.",
        ),
    ] = None,
    warn: Annotated[
        bool,
        typer.Option("--warn", help="The hooks only print what they would refuse; never refuse."),
    ] = False,
    protect: Annotated[
        list[str] | None,
        typer.Option("--protect", help="Protected ref (repeatable) (default: HEAD's branch)."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Repository name on the server (default: asked)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a hook detente did not write.")
    ] = False,
    repo_hooks: Annotated[
        bool,
        typer.Option(
            "--repo-hooks",
            help="When core.hooksPath points outside the repository (a global hooks "
            "directory), install into the repository's own hooks directory and set "
            "core.hooksPath there in its config (the shared directory's hooks then no "
            "longer run in it). Without it such an install is refused.",
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Install the pre-commit guard here, or the server-side checks in --bare BARE.

    Refused (exit 2, nothing written) when core.hooksPath points outside the repository:
    the hooks would run in every repository sharing that directory (see --repo-hooks).
    """

    def body(session: Session) -> None:
        from detente.vcs.hook_scripts import install_local, install_server

        if old_server is not None:
            _refuse_old_spelling(old_server)
            session.settings.server = old_server
        elif session.settings.server and not _is_url(session.settings.server):
            _refuse_old_spelling(session.settings.server)
        if server is None:
            done = install_local(
                session.settings.repo, warn=warn, force=force, repo_hooks=repo_hooks
            )
        else:
            url = session.settings.server or os.environ.get("DETENTE_URL")
            if not url:
                raise ValidationError(
                    "the server-side hook needs a detente server: pass the global --server URL "
                    "(or set DETENTE_URL)",
                    field="server",
                )
            repo_name = name or _served_name(session, server)
            if not repo_name:
                raise ValidationError(
                    "the server coordinates several repositories: name one with --name",
                    field="name",
                )
            done = install_server(
                server,
                url=url,
                repo_name=repo_name,
                protect=protect or (),
                warn=warn,
                force=force,
                repo_hooks=repo_hooks,
            )
        data = {
            "installed": [str(p) for p in done.scripts],
            "config": dict(done.config) if done.config else {},
            "protectedRefs": [v for k, v in done.config if k == "detente.protectedRef"],
            "warn": warn,
        }

        def text(console: Console) -> None:
            for path in done.scripts:
                console.print(f"installed {path}", markup=False)
            for key, value in done.config:
                console.print(f"  git config {key} {value}", markup=False)

        session.emit(data, text)

    run(ctx, json_flag, body)


def _is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def _refuse_old_spelling(value: str) -> None:
    """``hooks install --server BARE`` was renamed ``--bare BARE``: refuse a path clearly."""
    if not _is_url(value):
        raise ValidationError(
            f"--server takes the detente server's URL, not a repository ({value!r}): the "
            "shared repository is now named with --bare BARE, e.g. "
            f"`detente --server http://127.0.0.1:7420 hooks install --bare {value}`",
            field="server",
        )


def _served_name(session: Session, bare: Path) -> str | None:
    """The server's name for ``bare`` (same path), else its only repository's name."""
    served = session.client.repos()["repos"]
    for repo in served:
        if repo.get("path") and Path(str(repo["path"])).resolve() == bare.resolve():
            return str(repo["name"])
    return str(served[0]["name"]) if len(served) == 1 else None


@hooks_app.command("status")
def status(
    ctx: typer.Context,
    bare: Annotated[
        Path | None,
        typer.Option(
            "--bare",
            help="Show the server-side hooks of this shared repository "
            "(default: the current repository's, when it is bare).",
        ),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Show which detente hooks are installed, their versions, and whether they are current.

    Exit status 1 when a hook is missing, outdated or not detente's, or when
    core.hooksPath points outside the repository.
    """

    def body(session: Session) -> int:
        from detente.vcs.git import Git
        from detente.vcs.hook_status import hooks_status

        where = bare or session.settings.repo
        server = bare is not None or (
            Git(where).run("rev-parse", "--is-bare-repository", check=False).stdout.strip()
            == "true"
        )
        found = hooks_status(where, server=server)

        def text(console: Console) -> None:
            for hook in found.hooks:
                version = f" (detente {hook.version})" if hook.version else ""
                mode = " --warn" if hook.warn else ""
                console.print(f"{hook.hook:<22} {hook.state}{version}{mode}", markup=False)
            for key, values in found.config.items():
                for value in values:
                    console.print(f"  git config {key} {value}", markup=False)
            if not found.inside:
                origin = f" (set in {found.origin})" if found.origin else ""
                console.print(
                    f"core.hooksPath points outside this repository, at {found.hooks_dir}"
                    f"{origin}: hooks there run in every repository using it; install with "
                    "--repo-hooks to give this repository its own",
                    markup=False,
                )
            if found.kind == "server" and not found.reference_transaction:
                console.print(
                    f"git {'.'.join(map(str, found.git_version))} predates the "
                    "reference-transaction hook (2.28): only pushes are checked",
                    markup=False,
                )
            if not found.ok:
                again = "detente hooks install" + (f" --bare {where}" if server else "")
                again += "" if found.inside else " --repo-hooks"
                console.print(f"reinstall with: {again}", markup=False)

        session.emit(found.to_wire(), text)
        return 0 if found.ok else 1

    run(ctx, json_flag, body)
