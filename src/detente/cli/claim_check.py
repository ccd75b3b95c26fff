"""``detente claim check``: may this claim write these paths now?"""

from __future__ import annotations

from typing import Annotated

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import DetenteError

__all__ = ["check"]


def check(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The claim id (clm_...).")],
    paths: Annotated[list[str], typer.Argument(help="Repo-relative file paths to write.")],
    fencing_token: Annotated[
        int | None,
        typer.Option("--fencing-token", help="The token to present (refused if stale)."),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """May this claim write these paths now? Exit 0 if so, else the refusal's exit code
    (6 overlap_blocking, 8 out_of_scope or stale_fencing_token, 5 lease_expired, ...)."""

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
        session.emit(
            response,
            lambda console: console.print(
                f"allowed: {response['claimId']} may write {', '.join(response['paths'])}",
                markup=False,
            ),
        )
        return 0

    run(ctx, json_flag, body)
