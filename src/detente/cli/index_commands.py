"""``detente reconcile``, ``detente symbols`` and ``detente search``: the symbol and
semantic index, from the command line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["register"]

_Many = Annotated[list[str] | None, typer.Option()]


def _side(
    claim: str | None,
    actual: bool,
    paths: list[str] | None,
    symbols: list[str] | None,
    modules: list[str] | None,
    kind: str | None,
) -> dict[str, Any]:
    return {
        "claimId": claim,
        "actual": actual,
        "paths": list(paths or []),
        "symbols": list(symbols or []),
        "modules": list(modules or []),
        "roughChangeKind": kind,
    }


def reconcile(
    ctx: typer.Context,
    claim_a: Annotated[str | None, typer.Option("--claim-a", help="Side A: a claim id.")] = None,
    actual_a: Annotated[
        bool, typer.Option("--actual-a", help="Side A is the claim's actual diff/worktree.")
    ] = False,
    path_a: Annotated[list[str] | None, typer.Option("--path-a", help="Side A path/glob.")] = None,
    symbol_a: Annotated[
        list[str] | None, typer.Option("--symbol-a", help="Side A symbol (Class.method).")
    ] = None,
    module_a: Annotated[list[str] | None, typer.Option("--module-a", help="Side A module.")] = None,
    kind_a: Annotated[str | None, typer.Option("--kind-a", help="Side A change kind.")] = None,
    claim_b: Annotated[str | None, typer.Option("--claim-b", help="Side B: a claim id.")] = None,
    actual_b: Annotated[
        bool, typer.Option("--actual-b", help="Side B is the claim's actual diff/worktree.")
    ] = False,
    path_b: Annotated[list[str] | None, typer.Option("--path-b", help="Side B path/glob.")] = None,
    symbol_b: Annotated[
        list[str] | None, typer.Option("--symbol-b", help="Side B symbol (Class.method).")
    ] = None,
    module_b: Annotated[list[str] | None, typer.Option("--module-b", help="Side B module.")] = None,
    kind_b: Annotated[str | None, typer.Option("--kind-b", help="Side B change kind.")] = None,
    depth: Annotated[int, typer.Option("--depth", help="Blast-radius hops (1-5).")] = 2,
    limit: Annotated[int, typer.Option("--limit", help="Most references shown (1-500).")] = 50,
    json_flag: JsonFlag = False,
) -> None:
    """Where two intents meet: the symbols both touch and the blast radius between them.

    Each side is a claim (what it declared, or with --actual-X what its worktree or branch
    really changes) or an explicit plan (--path-X, --symbol-X, --module-X). Advice only.
    """

    def body(session: Session) -> None:
        a = _side(claim_a, actual_a, path_a, symbol_a, module_a, kind_a)
        b = _side(claim_b, actual_b, path_b, symbol_b, module_b, kind_b)
        repo = None if (claim_a or claim_b) else session.repo_name
        result = session.client.reconcile_intents(a, b, repo=repo, depth=depth, limit=limit)

        def text(console: Console) -> None:
            if result["shared"]:
                console.print("Both touch:", markup=False)
                for shared in result["shared"]:
                    console.print(f"  {shared['target']}", markup=False)
            else:
                console.print("No shared symbol or file.", markup=False)
            for ref in result["interactions"]:
                console.print(
                    f"  interaction: {ref['within']} references {ref['symbol']} "
                    f"({ref['path']}:{ref['line']})",
                    markup=False,
                )
            radius = result["blastRadius"]
            note = f", truncated: {radius['truncation']}" if radius["truncated"] else ""
            console.print(
                f"Blast radius: {len(radius['references'])} reference(s), depth "
                f"{radius['depth']}{note}",
                markup=False,
            )
            for ref in radius["references"]:
                where = f" in {ref['within']}" if ref.get("within") else ""
                console.print(
                    f"  {ref['path']}:{ref['line']}{where} uses {ref['symbol']} "
                    f"(depth {ref['depth']})",
                    markup=False,
                )
            console.print(f"Next: {result['next']}", markup=False)

        session.emit(result, text)

    run(ctx, json_flag, body)


def symbols(
    ctx: typer.Context,
    claim_id: Annotated[str, typer.Argument(help="The claim whose work to read.")],
    json_flag: JsonFlag = False,
) -> None:
    """The symbols a claim's worktree (or branch) touches now, and those outside its scope."""

    def body(session: Session) -> int:
        result = session.client.claim_symbols(claim_id)

        def text(console: Console) -> None:
            for file in result["files"]:
                names = ", ".join(s.split("::", 1)[1] for s in file["symbols"]) or "-"
                console.print(f"{file['path']}: {names}", markup=False)
            for outside in result["outsideScope"]:
                console.print(f"outside the claim's scope: {outside}", markup=False)

        session.emit(result, text)
        return 0

    run(ctx, json_flag, body)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, e.g. 'retry behaviour'.")],
    limit: Annotated[int, typer.Option("--limit", help="Most results (1-100).")] = 20,
    json_flag: JsonFlag = False,
) -> None:
    """Claims and memory sections ranked by relevance, each claim with its overlaps."""

    def body(session: Session) -> None:
        result = session.client.search(query, repo=session.repo_name, limit=limit)

        def text(console: Console) -> None:
            similarity = result["similarity"]
            console.print(f"({similarity['mode']} ranking)", markup=False, style="dim")
            if not result["results"]:
                console.print(f"nothing matches {query!r}", markup=False)
            for hit in result["results"]:
                label = hit.get("claimId") or f"{hit.get('path')}#{hit.get('section')}"
                console.print(f"{hit['score']:.3f}  {label}  {hit['text'][:80]}", markup=False)
                for overlap in hit.get("overlaps", []):
                    console.print(
                        f"        overlaps {overlap['claimId']} ({overlap['kind']}, "
                        f"{overlap['severity']})",
                        markup=False,
                    )

        session.emit(result, text)

    run(ctx, json_flag, body)


def register(app: typer.Typer) -> None:
    """Add ``reconcile``, ``symbols`` and ``search`` to the top-level command."""
    app.command("reconcile")(reconcile)
    app.command("symbols")(symbols)
    app.command("search")(search)
