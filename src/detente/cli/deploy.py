"""``detente deploy ENV``: move an environment by compare-and-swap.

The previous commit must be named (``--expect-prev OID``, or ``--expect-prev none`` for
the first deployment): if the environment moved meanwhile the server answers
``stale_base`` (exit 8) and records nothing. The commit defaults to the claim's
integrated head. Policy failures (pending migrations, too many unresolved risks, a claim
not integrated) are ``evidence_rejected`` (exit 8), each listed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["deploy", "parse_migrations"]


def parse_migrations(entries: list[str]) -> list[dict[str, str]]:
    """``ID=STATUS`` (or ``ID``, meaning applied) entries as ``[{id, status}]``."""
    out: list[dict[str, str]] = []
    for entry in entries:
        mid, sep, status = entry.partition("=")
        if not mid:
            raise ValidationError(f"--migration {entry!r}: expected ID=STATUS", field="migration")
        out.append({"id": mid, "status": status if sep else "applied"})
    return out


def deploy(
    ctx: typer.Context,
    env: Annotated[str, typer.Argument(help="Environment name, e.g. staging or production.")],
    claim_id: Annotated[str, typer.Option("--claim", "-c", help="The claim being deployed.")],
    expect_prev: Annotated[
        str,
        typer.Option("--expect-prev", help="Commit the environment is at now ('none': never)."),
    ],
    commit: Annotated[
        str | None,
        typer.Option("--commit", help="Commit to deploy (default: the claim's integrated head)."),
    ] = None,
    migration: Annotated[
        list[str] | None, typer.Option("--migration", help="ID=STATUS (repeatable).")
    ] = None,
    risk: Annotated[list[str] | None, typer.Option("--risk", help="Unresolved risk.")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Deploy a claim's commit to ENV by compare-and-swap (exit 8: stale_base or policy)."""

    def body(session: Session) -> None:

        claim = session.client.get_claim(claim_id)["claim"]
        target = commit or (claim.get("integration") or {}).get("newOid")
        if not target:
            raise ValidationError(
                f"claim {claim_id} has no integrated head: name --commit", field="commit"
            )
        body_: dict[str, Any] = {
            "repo": claim["repo"],
            "claimId": claim_id,
            "commitOid": target,
            "expectedPrevCommitOid": None if expect_prev.lower() == "none" else expect_prev,
            "migrations": parse_migrations(migration or []),
            "unresolvedRisks": list(risk or []),
        }
        response = session.client.deploy(env, body_)

        def text(console: Console) -> None:
            current = response["deployment"]
            assert current is not None  # the deployment just recorded
            console.print(
                f"{env}: {str(current['prevCommitOid'] or 'nothing')[:12]} -> "
                f"{current['commitOid'][:12]} (claim {current['claimId']}, "
                f"{len(response['history'])} deployment(s))",
                markup=False,
            )

        session.emit(response, text)

    run(ctx, json_flag, body)
