"""``detente claim objective``: change what a claim says it is for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from detente.cli.context import JsonFlag, Session, run

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["objective"]


def objective(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The claim id (clm_...).")],
    text: Annotated[str, typer.Argument(help="The new objective (what the claim is for).")],
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why (recorded in the log).")
    ] = None,
    expect_revision: Annotated[
        int | None,
        typer.Option("--expect-revision", help="Claim revision to expect (default: read it now)."),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Change a claim's objective; its semantic advisories are computed again.

    The objective names no file, so this never blocks and opens no meeting: it only
    changes which holders' objectives read as similar (advice, never a block). Prints the
    claim and its semantic advisories on the new objective. Exit 2 (validation_error) for
    a blank or unchanged objective, 3 on a revision conflict.
    """

    def body(session: Session) -> None:
        revision = expect_revision
        if revision is None:
            revision = session.client.get_claim(claim_id, include=[])["claim"]["revision"]
        response = session.client.change_objective(
            claim_id, expected_claim_revision=revision, objective=text, reason=reason
        )

        def show(console: Console) -> None:
            from detente.cli import views

            views.claim_view(console, response["claim"], session.now())
            semantic = response.get("semanticOverlaps", [])
            if semantic:
                views.overlaps_view(console, semantic)
            else:
                console.print("no semantic advisories on the new objective", markup=False)

        session.emit(response, show)

    run(ctx, json_flag, body)
