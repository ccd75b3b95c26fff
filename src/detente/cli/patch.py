"""``detente patch publish|list|apply``: the patch queue.

``publish`` turns the claim's commits (``--range BASE..HEAD``, default the claim's base
commit to the worktree's HEAD) into one ``git format-patch`` mbox and stores it on the
server, content-addressed. ``apply`` fetches an artifact and applies it in the current
worktree with ``git am --3way``; when that fails the worktree is left exactly as it was
and the conflicting files are listed (exit 8, code ``conflict``, ``files``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import ConflictError, ValidationError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["patch_app"]

patch_app = typer.Typer(help="The patch queue: publish, list and apply patch artifacts.")


@patch_app.command("publish")
def publish(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The claim whose work it is.")],
    range_: Annotated[
        str | None,
        typer.Option("--range", help="Commits BASE..HEAD (default: claim base..HEAD)."),
    ] = None,
    worktree: Annotated[
        Path | None, typer.Option("--worktree", help="Where the commits are (default: recorded).")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Publish the claim's commits as a content-addressed format-patch artifact."""

    def body(session: Session) -> None:
        from detente.cli.workspace import local_worktree
        from detente.vcs.patches import format_patch
        from detente.vcs.repo import resolve_commit

        claim = session.client.get_claim(claim_id)["claim"]
        place = worktree or local_worktree(claim) or session.settings.repo
        base, _, head = (range_ or f"{claim['baseCommit']}..HEAD").partition("..")
        base_oid = resolve_commit(place, base or str(claim["baseCommit"]), field="range")
        mbox = format_patch(place, base_oid, head or "HEAD")
        if not mbox:
            raise ValidationError(f"no commits in {base_oid[:12]}..{head or 'HEAD'}", field="range")
        response = session.client.publish_patch(claim_id, base_oid, mbox)
        patch = response["patch"]

        def text(console: Console) -> None:
            verb = "published" if response.get("created") else "already published"
            console.print(
                f"{verb} {patch['id']}: {patch['commits']} commit(s), "
                f"{len(patch['files'])} file(s): {', '.join(patch['files'])}",
                markup=False,
            )

        session.emit(response, text)

    run(ctx, json_flag, body)


@patch_app.command("list")
def list_(
    ctx: typer.Context,
    status: Annotated[
        str | None,
        typer.Option("--status", help="published (default), integrated, discarded or all."),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """The patch queue (published artifacts unless --status says otherwise)."""

    def body(session: Session) -> None:

        response = session.client.list_patches(repo=session.repo_name, status=status)

        def text(console: Console) -> None:
            if not response["patches"]:
                console.print("no patches")
            for p in response["patches"]:
                console.print(
                    f"{p['id']}  {p['status']:<10} {p['claimId']}  {p['commits']} commit(s)  "
                    f"{', '.join(p['files'])}",
                    markup=False,
                )

        session.emit(response, text)

    run(ctx, json_flag, body)


@patch_app.command("apply")
def apply(
    ctx: typer.Context,
    patch_id: Annotated[str, typer.Argument(help="The patch id (pat_...).")],
    worktree: Annotated[
        Path | None, typer.Option("--worktree", help="Apply here (default: --repo / cwd).")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Apply a patch with git am --3way; on conflict the worktree is left clean (exit 8)."""

    def body(session: Session) -> None:
        from detente.vcs.patches import apply_patch

        patch = session.client.get_patch(patch_id)["patch"]
        result = apply_patch(worktree or session.settings.repo, str(patch["mbox"]))
        outcome: dict[str, Any] = {
            "patchId": patch_id,
            "applied": result.applied,
            "headBefore": result.head_before,
            "headAfter": result.head_after,
            "conflicts": list(result.conflicts),
        }
        if not result.applied:
            raise ConflictError(
                f"patch {patch_id} does not apply ({result.message or 'git am failed'}); "
                "the worktree is unchanged",
                files=list(result.conflicts),
                **{k: v for k, v in outcome.items() if k != "conflicts"},
            )
        session.emit(
            outcome,
            lambda console: console.print(
                f"applied {patch_id}: HEAD {result.head_before[:12]} -> {result.head_after[:12]}",
                markup=False,
            ),
        )

    run(ctx, json_flag, body)
