"""``detente init``: set a repository up for agents (see :mod:`detente.harness.setup`).

Writes the git ``pre-commit`` hook (the installer of ``detente hooks install``), each
harness's MCP server entry and hooks, and the coordination section of ``AGENTS.md`` /
``CLAUDE.md``; idempotent; ``--remove`` gives the files back; ``--dry-run`` prints the
changes; ``--verify`` sends canaries through the hooks it wrote.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from detente.cli.context import JsonFlag

__all__ = ["init"]

_NOTHING_TO_VERIFY = (
    "no harness hooks are configured in this repository, nothing to verify: run "
    "`detente init` (or `detente init --agents claude,...`) first"
)


def _top(repo: Path | None) -> Path:
    from detente.vcs.repo import open_repo

    return open_repo(repo or Path.cwd()).path


def _git_hook(top: Path, dry_run: bool) -> tuple[dict[str, Any], dict[str, bytes | None]]:
    """Install the ``pre-commit`` guard and the ``post-commit`` merge check (``detente
    hooks install``); a foreign hook is reported, not replaced. Returns the row and
    ``{hook path: its bytes before}`` of each hook it wrote."""
    from detente.errors import DetenteError
    from detente.vcs.git import Git
    from detente.vcs.hook_scripts import hooks_dir, install_local

    row: dict[str, Any] = {"path": "git pre-commit hook"}
    try:
        target = hooks_dir(Git(top)) / "pre-commit"
        before = target.read_bytes() if target.is_file() else None
        # The post-commit merge check is written beside it: ``--remove`` gives it back too.
        advisory = target.with_name("post-commit")
        advisory_before = advisory.read_bytes() if advisory.is_file() else None
        if dry_run:
            return {**row, "action": "install"}, {}
        install_local(top)
    except DetenteError as exc:
        return {**row, "action": "skipped", "changed": False, "reason": exc.detail}, {}
    after = target.read_bytes() if target.is_file() else None
    changed = before != after
    action = ("create" if before is None else "update") if changed else "unchanged"
    outside = {str(target): before}
    if (advisory.read_bytes() if advisory.is_file() else None) != advisory_before:
        outside[str(advisory)] = advisory_before
    return {"path": str(target), "action": action, "changed": changed}, outside


def _diff(change: Any) -> str:
    before = (change.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    after = (change.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, f"a/{change.path}", f"b/{change.path}"))


def init(
    ctx: typer.Context,
    agents: Annotated[
        str | None,
        typer.Option(
            "--agents",
            help="Harnesses to set up, comma-separated: claude,codex,cursor,gemini (default all).",
        ),
    ] = None,
    remove: Annotated[
        bool, typer.Option("--remove", help="Give every file back as it was before detente init.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the changes; write nothing.")
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify", help="Send canary payloads through every configured hook and report."
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Set this repository up for agents: git hooks, MCP entries, harness hooks, AGENTS.md.

    Idempotent (a second run changes nothing); it merges into existing files and keeps
    every setting it did not write. Exit 0, or 2 for bad input (nothing written).
    ``--verify`` exits 1 when a canary failed or no harness is configured at all."""
    from detente.cli.context import settings
    from detente.errors import DetenteError
    from detente.harness import setup

    found = settings(ctx, json_flag)
    json_mode = found.json
    try:
        top = _top(found.repo)
        if verify:
            from detente.harness.verify import verify as run_verify

            report = run_verify(top)
            if not any(v["configured"] for v in report.values()):
                # Nothing fired: a pass would say hooks guard this repository when none do.
                _print_verify(report, json_mode, detail=_NOTHING_TO_VERIFY)
                raise typer.Exit(1)
            _print_verify(report, json_mode)
            failed = any(v["failed"] for v in report.values() if v["configured"])
            raise typer.Exit(1 if failed else 0)
        if remove:
            changes = setup.remove(top, dry_run=dry_run)
            rows = [c.to_wire() for c in changes]
            _print(rows, [c for c in changes if dry_run], json_mode, "remove", dry_run)
            return
        names = setup.parse_agents(agents)
        changes = setup.plan(top, names)
        rows = [c.to_wire() for c in changes]
        hook_row, outside = _git_hook(top, dry_run)
        if not dry_run:
            manifest = setup.apply(top, changes, names, outside)
            if manifest is not None:
                rows.append(manifest.to_wire())
        rows.append(hook_row)
        _print(rows, [c for c in changes if dry_run and c.changed], json_mode, "init", dry_run)
    except (ValueError, DetenteError) as exc:
        detail = exc.detail if isinstance(exc, DetenteError) else str(exc)
        if json_mode:
            print(json.dumps({"code": "validation_error", "detail": detail, "exitCode": 2}))
        else:
            sys.stderr.write(f"detente init: {detail}\n")
        raise typer.Exit(2) from None


def _print(
    rows: list[dict[str, Any]], diffs: list[Any], json_mode: bool, what: str, dry: bool
) -> None:
    if json_mode:
        print(json.dumps({"action": what, "dryRun": dry, "files": rows}))
        return
    for change in diffs:
        sys.stdout.write(_diff(change))
    for row in rows:
        mark = ""
        reason = f": {row['reason']}" if row.get("reason") else ""
        print(f"{row['action']:>10}  {row['path']}{mark}{reason}")


def _print_verify(report: dict[str, Any], json_mode: bool, detail: str = "") -> None:
    if json_mode:
        print(json.dumps({"harnesses": report, **({"detail": detail} if detail else {})}))
        return
    if detail:
        sys.stderr.write(f"detente init --verify: {detail}\n")
    for harness, entry in report.items():
        if not entry["configured"]:
            print(f"{harness}: not configured (detente init --agents {harness})")
            continue
        print(f"{harness}: fired {len(entry['fired'])}, denied {len(entry['denied'])}")
        for name in entry["fired"]:
            print(f"  fired{' and denied' if name in entry['denied'] else ''}: {name}")
        for failure in entry["failed"]:
            print(f"  FAILED: {failure}")
        print(f"  note: {entry['gap']}")
        for warning in entry["warnings"]:
            print(f"  warning: {warning}")
