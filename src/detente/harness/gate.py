"""The pre-tool gate: an edit or a shell command, judged before the tool acts.

:func:`gate` turns a :class:`~detente.harness.payloads.HookEvent` of kind ``edit`` or
``shell`` into a :class:`~detente.harness.verdicts.Verdict`: detente's own files are
protected first (no connection needed), then the files are judged by
:func:`detente.harness.judge.judge_paths`. A shell command is judged on the files that
can be read from it (:mod:`detente.harness.shell_paths`; for ``git add -A``,
``git stash``, ``git reset --hard`` the worktree's changed files, for ``git commit`` the
staged ones, for ``git push`` those of the commits not yet upstream); anything else is
allowed, and left to the git hooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from detente.harness.context import HookContext, session_key
from detente.harness.judge import judge_paths, protected, relative_paths
from detente.harness.payloads import HookEvent
from detente.harness.verdicts import Verdict

if TYPE_CHECKING:
    from detente.harness.shell_paths import ShellWrites

__all__ = ["gate", "own_files_refusal", "touched_files"]


def touched_files(event: HookEvent, top: Path) -> list[str]:
    """The repo-relative files ``event`` writes (for a shell command: those named)."""
    if event.kind == "edit":
        return relative_paths(top, event.cwd, event.paths)
    if event.kind == "shell" and event.command:
        from detente.harness.shell_paths import shell_writes  # only a shell command's

        writes = shell_writes(event.command)
        named = relative_paths(top, event.cwd, writes.paths)
        return [*named, ".git/config"] if writes.hooks_path else named
    return []


def own_files_refusal(files: list[str]) -> Verdict | None:
    """A refusal when ``files`` include detente's own files, else None."""
    mine = [f for f in files if protected(f)]
    if not mine:
        return None
    return Verdict(
        "deny",
        f"detente: {', '.join(mine[:4])} is detente's own configuration (the hooks that "
        "coordinate agents here); agents may not edit it. A person changes it with "
        "`detente init` / `detente init --remove`, or by hand outside the agent.",
    )


def gate(ctx: HookContext, event: HookEvent, files: list[str]) -> Verdict:
    """The verdict on an ``edit`` or ``shell`` event (see the module docstring).

    Args:
        ctx: the open hook context.
        event: the event.
        files: :func:`touched_files` of the event (already checked for own files).

    Raises:
        DetenteError: the client's errors (the caller fails safe).
    """
    key = session_key(event.harness, event.session)
    if event.kind == "edit":
        changes = {
            rel: event.changes.get(raw, ())
            for raw in event.paths
            for rel in relative_paths(ctx.top, event.cwd, [raw])
        }
        return judge_paths(ctx, key, files, changes=changes, intent=f"{event.tool} edit")
    from detente.harness.shell_paths import shell_writes

    writes = shell_writes(event.command or "")
    if writes.empty:
        return Verdict("allow")
    paths = list(files) + _git_files(ctx.top, writes)
    return judge_paths(ctx, key, list(dict.fromkeys(paths)), intent="shell write")


def _git_files(top: Path, writes: ShellWrites) -> list[str]:
    """The files a git command would write or publish, read from the worktree."""
    from detente.vcs.git import Git

    git = Git(top)
    out: list[str] = []
    if writes.changed:
        status = git.run("status", "--porcelain", "-z", "--untracked-files=all", check=False)
        entries = status.stdout.split("\0")
        skip = False
        for entry in entries:
            if skip:
                skip = False
                continue
            if len(entry) > 3:
                out.append(entry[3:])
                skip = entry[0] in "RC"  # a rename's source follows
    if writes.staged:
        staged = git.run("diff", "--cached", "--name-only", "-z", check=False)
        out += [p for p in staged.stdout.split("\0") if p]
    if writes.pushed:
        upstream = git.run("rev-parse", "--verify", "--quiet", "@{upstream}", check=False)
        if upstream.ok:
            pushed = git.run("diff", "--name-only", "-z", "@{upstream}...HEAD", check=False)
            out += [p for p in pushed.stdout.split("\0") if p]
    return out
