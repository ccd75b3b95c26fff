"""``detente claim complete`` (gathers evidence itself) and ``detente integrate``.

``claim complete`` collects the evidence in the claim's worktree, in this order, so that
every test result is recorded *after* the head commit it vouches for:

1. the head commit (``HEAD`` of the worktree); tracked files with uncommitted changes
   are refused (they would not be integrated);
2. the expected base: ``--base-ref`` (default ``refs/heads/<default branch>``) at
   ``--base-oid``, by default the merge base of the head and that ref: the commit the
   work was built on, *not* the ref's current tip, so a ref that moved is a
   ``stale_base`` (exit 8), never a silent rebase;
3. the changed files: the real diff base..head;
4. each ``--test CMD`` runs in the worktree (``sh -c``), recording its exit code, duration
   and the time it finished; ``--test NAME=CMD`` names it after one of the claim's
   ``testResponsibility`` entries (otherwise the name is the command itself); the output
   streams as it runs, between progress lines, and a summary line follows
   (:mod:`detente.cli.evidence_tests`);
5. the claim is read for its revision and fencing token, and the evidence is posted.

``detente integrate`` asks the server to integrate a ``ready_for_review`` claim (one
completed with ``--no-integrate``) with the evidence it already accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["gather_evidence", "register"]

ClaimId = Annotated[str, typer.Argument(help="The claim id (clm_...).")]
ExpectRevision = Annotated[
    int | None,
    typer.Option("--expect-revision", help="Claim revision to expect (default: read it now)."),
]
BaseOid = Annotated[
    str | None,
    typer.Option(
        "--base-oid",
        help="OID the protected ref is expected at (default: merge base of HEAD and the ref).",
    ),
]


def register(app: typer.Typer, claim_app: typer.Typer) -> None:
    """Add ``claim complete`` and the top-level ``integrate``."""
    claim_app.command("complete")(complete)
    app.command("integrate")(integrate)


def gather_evidence(
    claim: Mapping[str, Any],
    worktree: Path,
    *,
    base_ref: str,
    base_oid: str | None,
    tests: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The ``complete`` body (without revision and token) gathered in ``worktree``.

    The tests' progress and output lines go to ``progress`` as they run
    (:mod:`detente.cli.evidence_tests`).

    Returns:
        ``{expectedBaseRef {ref, oid}, evidence {...}}``; each test record keeps its
        ``output`` for display (strip it before posting).

    Raises:
        ValidationError: uncommitted changes to tracked files, an unknown ``base_oid``,
            or a ref with no common history with the head.
    """
    from detente.cli.evidence_tests import run_tests, split_test
    from detente.vcs.git import Git
    from detente.vcs.refs import diff_names
    from detente.vcs.repo import resolve_commit

    git = Git(worktree)
    dirty = [p for p in git.run("diff", "HEAD", "--name-only", "-z").stdout.split("\0") if p]
    if dirty:
        raise ValidationError(
            f"uncommitted changes to {', '.join(dirty)}: commit them (or restore them) "
            "before completing",
            field="worktree",
            paths=dirty,
        )
    head = resolve_commit(worktree, "HEAD", field="headCommit")
    if base_oid is None:
        found = git.run("merge-base", head, base_ref, check=False)
        if not found.ok:
            raise ValidationError(
                f"HEAD and {base_ref} share no history; name --base-oid", field="baseOid"
            )
        base_oid = found.stdout.strip()
    base_oid = resolve_commit(worktree, base_oid, field="expectedBaseRef.oid")
    responsibilities = list(claim.get("testResponsibility") or [])
    entries = [split_test(entry, responsibilities) for entry in tests]
    records = run_tests(entries, worktree, progress=progress)
    evidence: dict[str, Any] = {
        "headCommit": head,
        "changedFiles": diff_names(worktree, base_oid, head),
        "tests": records,
        "apiChanges": list(claim.get("expectedContractChanges") or []),
        "deployment": claim.get("deploymentResponsibility"),
    }
    evidence.update(extra or {})
    return {"expectedBaseRef": {"ref": base_ref, "oid": base_oid}, "evidence": evidence}


def _worktree(claim: Mapping[str, Any], given: Path | None) -> Path:
    from detente.cli.evidence import no_worktree_reason
    from detente.cli.workspace import local_worktree

    found = given or local_worktree(claim)
    if found is None:
        raise ValidationError(
            f"{no_worktree_reason(claim)}: pass --worktree DIR, the checkout holding its "
            "commits (--worktree . for the current one)",
            field="worktree",
        )
    return found


def _default_ref(worktree: Path) -> str:
    from detente.vcs.repo import open_repo

    return f"refs/heads/{open_repo(worktree).default_branch}"


def _report(session: Session, response: Mapping[str, Any], tests: list[dict[str, Any]]) -> None:
    claim = response["claim"]

    def text(console: Console) -> None:
        moved = claim.get("integration") or {}
        where = (
            f" ({moved['ref']} -> {str(moved['newOid'])[:12]})"
            if moved.get("outcome") == "integrated"
            else ""
        )
        console.print(f"{claim['id']}: {claim['status']}{where}", markup=False)
        for t in tests:
            console.print(f"  test {t['name']}: {t['status']} (exit {t['exitCode']})", markup=False)

    session.emit({**response, "tests": tests}, text)


def complete(
    ctx: typer.Context,
    claim_id: ClaimId,
    test: Annotated[
        list[str] | None,
        typer.Option(
            "--test",
            "-t",
            metavar="[NAME=]COMMAND",
            help="Run COMMAND in the worktree (sh -c) and record its result (repeatable). "
            "NAME=COMMAND records it as the claim's test responsibility NAME (from claim "
            "open --test NAME): the way to satisfy one. Output streams as it runs.",
        ),
    ] = None,
    base_ref: Annotated[
        str | None,
        typer.Option("--base-ref", help="Protected ref to advance (default: the default branch)."),
    ] = None,
    base_oid: BaseOid = None,
    no_integrate: Annotated[
        bool,
        typer.Option("--no-integrate", help="Stop at ready_for_review (push it yourself)."),
    ] = False,
    worktree: Annotated[
        Path | None, typer.Option("--worktree", help="The claim's worktree (default: recorded).")
    ] = None,
    memory_update: Annotated[
        list[str] | None, typer.Option("--memory-update", help="Memory file updated.")
    ] = None,
    migration: Annotated[
        list[str] | None, typer.Option("--migration", help="Migration id it adds.")
    ] = None,
    risk: Annotated[list[str] | None, typer.Option("--risk", help="Unresolved risk.")] = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Gather evidence in the claim's worktree, run the tests, complete and integrate.

    Exit 8 with evidence_rejected (every failure listed) or stale_base (rebase onto the
    ref's current OID, shown as 'actual', then run this again).
    """

    def body(session: Session) -> int:
        from detente.cli.evidence_tests import summary

        claim = session.client.get_claim(claim_id)["claim"]
        place = _worktree(claim, worktree)
        extra = {
            "memoryUpdates": list(memory_update or []),
            "migrations": list(migration or []),
            "unresolvedRisks": list(risk or []),
        }
        gathered = gather_evidence(
            claim,
            place,
            base_ref=base_ref or _default_ref(place),
            base_oid=base_oid,
            tests=test or [],
            extra=extra,
            progress=session.out.progress,
        )
        records = gathered["evidence"]["tests"]
        session.out.progress(summary(records))
        posted = [{k: v for k, v in t.items() if k != "output"} for t in records]
        claim = session.client.get_claim(claim_id)["claim"]  # fresh revision after the tests
        response = session.client.complete(
            claim_id,
            {
                "expectedClaimRevision": (
                    expect_revision if expect_revision is not None else claim["revision"]
                ),
                "fencingToken": claim["fencingToken"],
                "expectedBaseRef": gathered["expectedBaseRef"],
                "evidence": {**gathered["evidence"], "tests": posted},
                "integrate": not no_integrate,
            },
        )
        _report(session, response, records)
        return 0

    run(ctx, json_flag, body)


def integrate(
    ctx: typer.Context,
    claim_id: ClaimId,
    base_oid: BaseOid = None,
    expect_revision: ExpectRevision = None,
    json_flag: JsonFlag = False,
) -> None:
    """Integrate a ready_for_review claim with the evidence the server accepted.

    The recorded expected base is used unless --base-oid names another (after a rebase,
    run `detente claim complete` again instead: the evidence must be re-collected).
    """

    def body(session: Session) -> int:

        claim = session.client.get_claim(claim_id)["claim"]
        evidence = dict(claim.get("evidence") or {})
        base = dict(evidence.pop("expectedBaseRef", None) or {})
        if not evidence or claim["status"] != "ready_for_review":
            raise ValidationError(
                f"claim {claim_id} is {claim['status']} with no accepted evidence to integrate: "
                "run `detente claim complete` first",
                field="evidence",
            )
        for key in ("stale", "staleReason"):
            evidence.pop(key, None)
        if base_oid is not None:
            base["oid"] = base_oid
        response = session.client.complete(
            claim_id,
            {
                "expectedClaimRevision": (
                    expect_revision if expect_revision is not None else claim["revision"]
                ),
                "fencingToken": claim["fencingToken"],
                "expectedBaseRef": base,
                "evidence": evidence,
            },
        )
        _report(session, response, [])
        return 0

    run(ctx, json_flag, body)
