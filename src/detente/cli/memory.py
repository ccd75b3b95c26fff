"""``detente memory ...``: register, list, show, patch, write, append, render, reconcile.

Writes name what they expect: ``patch`` sends the section's revision and the file hash
it read, by default the server's current section revision and the hash of the file the
write targets as this command reads it now; ``--expect-revision`` and
``--expect-file-hash`` pin them to what the agent actually read, so a concurrent change
is a ``revision_conflict`` (exit 4) instead of an overwrite. The claim's fencing token is
read from the claim.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.operations import wire

if TYPE_CHECKING:
    from rich.console import Console

    from detente.client import Client

__all__ = ["memory_app"]

memory_app = typer.Typer(
    help="Active memory files (AGENTS.md, CLAUDE.md, ...): sections, appends, generated regions.",
    no_args_is_help=True,
)

ClaimOpt = Annotated[str, typer.Option("--claim", "-c", help="The writing claim (clm_...).")]
WorktreeOpt = Annotated[
    Path | None,
    typer.Option(
        "--worktree",
        help="The worktree the write is recorded from (default: the claim's worktree when it "
        "is on this machine). The write itself is a commit on the integration branch.",
    ),
]
CheckoutOpt = Annotated[
    Path | None,
    typer.Option(
        "--worktree",
        help="The worktree recorded with the write (the write is a commit on the "
        "integration branch).",
    ),
]
DocPath = Annotated[str, typer.Argument(help="Repo-relative path of the document.")]


def _read_input(source: Path) -> str:
    try:
        return sys.stdin.read() if str(source) == "-" else source.read_text(encoding="utf-8")
    except OSError as exc:
        from detente.errors import ValidationError

        raise ValidationError(
            f"cannot read {source}: {exc.strerror or exc}", field="from"
        ) from None
    except UnicodeDecodeError as exc:
        from detente.errors import ValidationError

        raise ValidationError(
            f"{source} is not UTF-8 text (byte {exc.start}): an entry or a section body is "
            "text; convert it first (e.g. iconv -t UTF-8)",
            field="from",
        ) from None


def _document(client: Client, repo: str, path: str) -> wire.Document:
    """The registered document at ``path`` (``not_found`` when it is not registered)."""
    return client.list_documents(repo, path)["documents"][0]


def _writer(session: Session, claim_id: str, worktree: Path | None) -> tuple[int, str | None]:
    """The claim's fencing token and the worktree recorded with a write (the write itself
    is a commit on the integration branch).

    ``--worktree`` when given, else the claim's own worktree when it is on this machine,
    else None.
    """
    from detente.cli.workspace import local_worktree

    claim = session.client.get_claim(claim_id)["claim"]
    place = worktree.absolute() if worktree is not None else local_worktree(claim)
    return int(claim["fencingToken"]), str(place) if place is not None else None


def _document_text(console: Console, doc: Mapping[str, Any]) -> None:
    from rich.table import Table

    disk = doc.get("onDisk") or {}
    sync = (
        ""
        if not disk
        else "in sync"
        if disk.get("inSync")
        else "ABSENT FROM THE BRANCH (the next write creates it)"
        if disk.get("fileHash") is None
        else "CHANGED ON THE BRANCH (a person's edit: adopted at the next write)"
    )
    where = f"  on {disk['ref'].removeprefix('refs/heads/')}" if disk.get("ref") else ""
    console.print(
        f"{doc['path']}  {doc['class']}  revision {doc['revision']}  "
        f"{(doc.get('fileHash') or '-')[:12]}{where}  {sync}",
        markup=False,
    )
    for copy in doc.get("checkouts", []):
        if copy["state"] != "current":
            why = (
                "behind the branch (it did not follow: `git checkout -- " + doc["path"] + "`)"
                if copy["state"] == "behind"
                else "edited there (adopted at the next write when it merges; kept otherwise)"
            )
            console.print(f"  checkout {copy['worktree']}: {why}", markup=False)
    if doc["sections"]:
        table = Table("section", "title", "rev", "owner", "hash", box=None)
        for s in doc["sections"]:
            indent = "  " * max(0, min(s["level"], 7) - 1)
            table.add_row(
                indent + s["key"],
                s["title"],
                str(s["revision"]),
                s.get("ownerClaimId") or "-",
                s["hash"][:12],
            )
        console.print(table)
    for region in doc.get("regions", []):
        console.print(f"  region {region['key']}  rev {region['revision']}", markup=False)
    for rec in doc.get("reconciliations", []):
        if rec["status"] == "open":
            console.print(
                f"  reconciliation {rec['id']} open on region {rec['regionKey']}: "
                f"detente memory reconcile {doc['path']} --id {rec['id']} "
                "--decision upstream|overlay",
                markup=False,
            )
    for art in doc.get("artifacts", []):
        console.print(
            f"  artifact {art['id']} ({art['claimId']}, #{art['sectionKey']}): {art['reason']}",
            markup=False,
        )


@memory_app.command("register")
def register(
    ctx: typer.Context,
    path: DocPath,
    doc_class: Annotated[
        str,
        typer.Option("--class", help="generated | append_only | section_owned | private."),
    ] = "section_owned",
    json_flag: JsonFlag = False,
) -> None:
    """Register a memory document (its sections, regions and hash are recorded now)."""

    def body(session: Session) -> None:
        response = session.client.register_document(session.repo_name, path, doc_class)
        session.emit(response, lambda console: _document_text(console, response["document"]))

    run(ctx, json_flag, body)


@memory_app.command("list")
def list_(ctx: typer.Context, json_flag: JsonFlag = False) -> None:
    """Registered documents: class, revision, whether the file still has the recorded hash."""

    def body(session: Session) -> None:
        response = session.client.list_documents(session.repo_name)

        def text(console: Console) -> None:
            for doc in response["documents"]:
                disk: Mapping[str, Any] = doc.get("onDisk") or {}
                sync = "" if not disk else ("" if disk.get("inSync") else "  CHANGED ON BRANCH")
                behind = [c for c in doc.get("checkouts", []) if c["state"] != "current"]
                sync += f"  {len(behind)} checkout(s) behind or edited" if behind else ""
                console.print(
                    f"{doc['path']}  {doc['class']}  revision {doc['revision']}  "
                    f"{len(doc['sections'])} sections{sync}",
                    markup=False,
                )
            if not response["documents"]:
                console.print("no memory documents registered")

        session.emit(response, text)

    run(ctx, json_flag, body)


@memory_app.command("show")
def show(ctx: typer.Context, path: DocPath, json_flag: JsonFlag = False) -> None:
    """One document: sections with revision, owner and hash; reconciliations; artifacts."""

    def body(session: Session) -> None:
        doc = _document(session.client, session.repo_name, path)
        session.emit({"document": doc}, lambda console: _document_text(console, doc))

    run(ctx, json_flag, body)


@memory_app.command("read")
def read(ctx: typer.Context, path: DocPath, json_flag: JsonFlag = False) -> None:
    """Print the authoritative text: the document as the integration branch holds it."""

    def body(session: Session) -> None:
        found = session.client.list_documents(session.repo_name, path, text=True)
        if not found["documents"]:
            from detente.errors import NotFoundError

            raise NotFoundError(f"{path} is not a registered memory document you may read")
        doc = found["documents"][0]
        session.emit(
            {"document": doc},
            lambda console: console.out(doc.get("text", ""), end="", highlight=False),
        )

    run(ctx, json_flag, body)


@memory_app.command("patch")
def patch(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="PATH#SECTION, e.g. AGENTS.md#build.")],
    source: Annotated[
        Path, typer.Option("--from", help="File with the new section body ('-': stdin).")
    ],
    claim: ClaimOpt,
    diff: Annotated[
        bool, typer.Option("--diff", help="The file is a unified diff, not the new body.")
    ] = False,
    expect_revision: Annotated[
        int | None, typer.Option("--expect-revision", help="Section revision you read.")
    ] = None,
    expect_file_hash: Annotated[
        str | None,
        typer.Option(
            "--expect-file-hash",
            help="File hash (sha256) you read (default: the hash detente recorded).",
        ),
    ] = None,
    worktree: WorktreeOpt = None,
    json_flag: JsonFlag = False,
) -> None:
    """Patch one section; every other byte of the file stays as it is."""

    def body(session: Session) -> None:
        from detente.errors import ValidationError

        path, _, key = target.partition("#")
        if not path or not key:
            raise ValidationError("name the section as PATH#SECTION", field="target")
        repo = session.repo_name
        doc = _document(session.client, repo, path)
        revision = expect_revision
        if revision is None:
            revision = next((s["revision"] for s in doc["sections"] if s["key"] == key), 0)
        # What you read is what detente last recorded, not what is on disk now: a person's
        # unsaved edit on disk must be merged or refused, never taken as your base.
        file_hash = expect_file_hash or doc.get("fileHash")
        text_in = _read_input(source)
        token, place = _writer(session, claim, worktree)
        on_disk = doc.get("onDisk")
        response = session.client.patch_section(
            {
                "repo": repo,
                "path": path,
                "sectionKey": key,
                "expectedSectionRevision": revision,
                "expectedFileHash": file_hash or (on_disk["fileHash"] if on_disk else None) or "",
                "claimId": claim,
                "fencingToken": token,
                "worktree": place,
                "patch": {"diff": text_in} if diff else {"body": text_in},
            }
        )
        section = response["section"]
        merged = " (merged with changes made since your base)" if response.get("merged") else ""
        session.emit(
            response,
            lambda console: console.print(
                f"patched {path}#{key}: revision {section['revision']}{merged}", markup=False
            ),
        )

    run(ctx, json_flag, body)


@memory_app.command("append")
def append(
    ctx: typer.Context,
    path: DocPath,
    claim: ClaimOpt,
    source: Annotated[
        Path | None, typer.Option("--from", help="File with the entry ('-': stdin).")
    ] = None,
    text: Annotated[str | None, typer.Option("--text", help="The entry itself.")] = None,
    worktree: WorktreeOpt = None,
    json_flag: JsonFlag = False,
) -> None:
    """Append an entry to an append-only document."""

    def body(session: Session) -> None:
        from detente.errors import ValidationError

        if (source is None) == (text is None):
            raise ValidationError("give exactly one of --from and --text", field="from")
        entry = text if text is not None else _read_input(source or Path("-"))
        token, place = _writer(session, claim, worktree)
        response = session.client.append_entry(
            {
                "repo": session.repo_name,
                "path": path,
                "claimId": claim,
                "fencingToken": token,
                "entry": entry,
                "worktree": place,
            }
        )
        where = response["entry"]
        session.emit(
            response,
            lambda console: console.print(
                f"appended {where['length']} bytes to {path} at offset {where['offset']}",
                markup=False,
            ),
        )

    run(ctx, json_flag, body)


@memory_app.command("render")
def render(
    ctx: typer.Context,
    path: Annotated[
        str | None, typer.Argument(help="One generated document (default: all of them).")
    ] = None,
    worktree: CheckoutOpt = None,
    json_flag: JsonFlag = False,
) -> None:
    """Re-render generated regions from the records; edited regions stay and are reported.

    Exits 1 when a document could not be rendered (bad markers): it is left untouched.
    """

    def body(session: Session) -> int:
        response = session.client.render(
            session.repo_name, path, str(worktree.absolute()) if worktree else None
        )
        results = response["results"]

        def text(console: Console) -> None:
            for r in results:
                if "error" in r:
                    console.print(
                        f"{r['path']}: not rendered: {r['error']['detail']}", markup=False
                    )
                    continue
                done = ", ".join(r["rendered"]) or "nothing changed"
                console.print(f"{r['path']}: rendered {done}", markup=False)
                for rec in r["reconciliations"]:
                    console.print(
                        f"  a user edited a generated region: reconciliation {rec} "
                        f"(detente memory reconcile {r['path']} --id {rec} "
                        "--decision upstream|overlay)",
                        markup=False,
                    )
            if not results:
                console.print("no generated documents registered")

        session.emit(response, text)
        return 1 if any("error" in r for r in results) else 0

    run(ctx, json_flag, body)


@memory_app.command("reconcile")
def reconcile(
    ctx: typer.Context,
    path: DocPath,
    decision: Annotated[
        str,
        typer.Option(
            "--decision",
            help="upstream: keep the edit in the log, re-render; overlay: move it after the "
            "region as manual text, re-render.",
        ),
    ],
    reconciliation_id: Annotated[
        str | None, typer.Option("--id", help="The reconciliation (rec_...).")
    ] = None,
    region: Annotated[str | None, typer.Option("--region", help="Region key.")] = None,
    worktree: CheckoutOpt = None,
    json_flag: JsonFlag = False,
) -> None:
    """Decide where a user's edit of a generated region belongs."""

    def body(session: Session) -> None:
        response = session.client.reconcile(
            {
                "repo": session.repo_name,
                "path": path,
                "decision": decision,
                "reconciliationId": reconciliation_id,
                "regionKey": region,
                "worktree": str(worktree.absolute()) if worktree else None,
            }
        )
        session.emit(response, lambda console: _document_text(console, response["document"]))

    run(ctx, json_flag, body)
