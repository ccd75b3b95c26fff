"""``detente claim merge-check``: predict the merges of a claim's branch, and its drift."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.cli.views import escaped_line

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["merge_check", "render_checks"]


def merge_check(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The claim id (clm_...).")],
    json_flag: JsonFlag = False,
) -> None:
    """Merge a claim's branch with the integration branch and with the branches of the
    live claims sharing a directory with it (git merge-tree: nothing is checked out).

    A predicted textual conflict with another claim opens a meeting (or joins the one they
    share), with the conflicting hunks as its witness, even when the declared scopes do
    not overlap. Paths the claim's work changed outside its granted scope are reported as
    drifted (added to its scope when detente.toml says [harness] unclaimed = "auto-claim").
    The git hooks run this after every commit; the server's sweep after a branch moves.
    """

    def body(session: Session) -> None:
        response = session.client.merge_check(claim_id)

        def show(console: Console) -> None:
            render_checks(console, dict(response))

        session.emit(response, show)

    run(ctx, json_flag, body)


def render_checks(console: Console, checks: dict[str, Any]) -> None:
    """Print a claim's merge check and drift (``{mergeCheck, drifted[], meetings[]?}``)."""
    merge = checks.get("mergeCheck")
    if merge is None:
        console.print("merge check: never run", markup=False)
    else:
        against = ", ".join(merge["checked"]) or "nothing"
        console.print(f"merge check of {merge['head'][:12]} against {against}", markup=False)
        if not merge["conflicts"]:
            console.print("  every merge is clean", markup=False)
        for conflict in merge["conflicts"]:
            files = ", ".join(conflict["files"])
            console.print(f"  conflict with {conflict['against']} in {files}", markup=False)
            for hunk in conflict["hunks"]:
                console.print(f"    {hunk['path']}:{hunk['line']}", markup=False)
                for line in str(hunk["text"]).splitlines():
                    console.print(f"      {escaped_line(line)}", markup=False)
    for meeting in checks.get("meetings", []):
        console.print(f"  meeting {meeting['id']} ({meeting['status']})", markup=False)
    drifted = checks.get("drifted", [])
    if drifted:
        console.print(f"drifted outside the scope: {', '.join(drifted)}", markup=False)
    for path in checks.get("autoClaimed", []):
        console.print(f"  auto-claimed {path}", markup=False)
