"""``detente claim check``: may this claim write these paths now?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import DetenteError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["check"]


def check(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The claim id (clm_...).")],
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Repo-relative file paths to write, or one symbol of a file "
            "(path::Qualified.name) each."
        ),
    ],
    fencing_token: Annotated[
        int | None,
        typer.Option("--fencing-token", help="The token to present (refused if stale)."),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """May this claim write these paths (or symbols) now? Exit 0 if so, else the refusal's
    exit code (6 overlap_blocking, 8 out_of_scope or stale_fencing_token, 5 lease_expired,
    ...).

    The answer is the pre-commit hook's: a symbol (src/x.py::Retry.backoff) is judged as
    a change to that symbol alone; a file the claim holds only through symbols is allowed
    "limited to" them (once the worktree changes it, the check judges what it touches)."""

    def body(session: Session) -> int:
        try:
            response = session.client.check_writes(claim_id, paths, fencing_token=fencing_token)
        except DetenteError as exc:
            code = session.out.error(exc)
            if not session.out.json_mode:
                err = session.out.err
                for blocker in exc.extra.get("blockers", []) or []:
                    err.print(
                        f"  {blocker.get('path')} is held by {blocker.get('claimId')} "
                        f"({blocker.get('agent')})",
                        markup=False,
                    )
                for outside in exc.extra.get("paths", []) or []:
                    err.print(f"  outside the claim: {outside}", markup=False)
            return code
        limits = response.get("limitedTo", {})

        def human(console: Console) -> None:
            console.print(
                f"allowed: {response['claimId']} may write {', '.join(response['paths'])}",
                markup=False,
            )
            for path, symbols in limits.items():
                console.print(f"  {path}: limited to {', '.join(symbols)}", markup=False)

        session.emit(response, human)
        return 0

    run(ctx, json_flag, body)
