"""Judge an edit or a shell write: the one authority rule, asked through the client.

Every question goes to the application layer's ``check_edit`` operation
(``POST /v1/hooks/edit-check``, :mod:`detente.service.edit_check`), one request in
server mode: it finds the claim the session works under, asks the pre-commit check
(:func:`detente.service.commit_check.check_commit`: the rule of
:mod:`detente.domain.authority`, the same function the git ``pre-commit`` hook and
``detente claim check`` ask) and answers the holders, the shared meeting rooms and the
options with it, in server and in local mode. The adapter only names the files (and,
for an edit of a parsed language whose answer could turn on symbols, the symbols it
would touch: :mod:`detente.harness.symbol_edits`) and words the answer:

- a refused path another live claim holds (``held``), or a session claim that may not
  write now (``problems``): deny, naming the holder (:func:`~detente.harness.verdicts.held_reason`);
- a path outside the session's claim that no other claim holds, or any path when the
  session works under no claim: the repository's ``[harness] unclaimed`` policy:
  ``advise`` allows with a word, ``require`` denies, ``auto-claim`` adds the files to the
  session's claim (``scope_change``) or opens one for the session (``open_claim``), with
  overlap analysis as for any claim (a contested file then waits in a meeting: denied).

Detente's own files (the hook configurations ``detente init`` wrote, ``detente.toml``,
``.detente/``, ``.git/``) are protected: an agent's edit of them is denied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from detente.harness.context import HookContext, checked_out_branch
from detente.harness.payloads import Change
from detente.harness.repo_paths import relative_paths
from detente.harness.verdicts import Verdict, held_reason, short

__all__ = ["PROTECTED", "judge_paths", "protected", "relative_paths"]

#: Files no agent edits through a harness (the hooks' own configuration).
PROTECTED = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".cursor/hooks.json",
    ".cursor/mcp.json",
    ".gemini/settings.json",
    "detente.toml",
)
_PROTECTED_DIRS = (".detente/", ".git/")


def protected(rel: str) -> bool:
    """Whether ``rel`` (repo-relative) is one of detente's own files, or a directory
    holding one (``rm -rf .claude``, ``mv .codex elsewhere``)."""
    if rel in PROTECTED or rel.startswith(_PROTECTED_DIRS) or rel in (".git", ".detente"):
        return True
    return any(own.startswith(rel.rstrip("/") + "/") for own in PROTECTED)


def judge_paths(
    ctx: HookContext,
    key: str | None,
    paths: Sequence[str],
    *,
    changes: Mapping[str, Sequence[Change]] | None = None,
    intent: str = "",
) -> Verdict:
    """May the session write these repo-relative files now? (see the module docstring)

    One request (the ``check_edit`` operation) answers it; a second one, with the
    symbols the edit touches, only when a refusal could turn on them (``symbolsMatter``).

    Args:
        ctx: the open hook context.
        key: the detente session id (None: the session is unknown).
        paths: repo-relative files.
        changes: what the edit replaces, per path (for symbol judging).
        intent: the edit in words (for an auto-claimed claim's objective).

    Raises:
        DetenteError: the client's errors (the caller fails safe).
    """
    if not paths:
        return Verdict("allow")
    answer = _check_edit(ctx, key, paths, None)
    if answer["decision"] == "deny" and answer["symbolsMatter"] and changes:
        held = any(f["kind"] == "held" for f in answer["check"]["findings"])
        edits = _symbol_edits(ctx.top, paths, changes) if held else []
        if edits:
            answer = _check_edit(ctx, key, paths, edits)
    from detente.harness.wakeups import deliver

    woke = deliver(ctx, key, answer)
    verdict = _verdict(ctx, key, paths, answer, intent)
    if not woke:
        return verdict
    if verdict.denied:
        return verdict._replace(reason=short(f"{woke}\n{verdict.reason}"))
    return verdict._replace(context=short("\n".join(t for t in (woke, verdict.context) if t)))


def _verdict(
    ctx: HookContext, key: str | None, paths: Sequence[str], answer: Any, intent: str
) -> Verdict:
    """The verdict the edit check's answer gives (the notices aside)."""
    mine = dict(answer["claim"]) if answer["claim"] is not None else None
    check = answer["check"]
    if answer["decision"] == "deny":
        held_paths = [f["path"] for f in check["findings"] if f["kind"] == "held"]
        holders = [dict(h) for h in answer["holders"][:2]]
        room = answer["rooms"][0] if answer["rooms"] and mine is not None else None
        refused = held_paths or list(paths)
        return Verdict("deny", held_reason(refused, holders, mine, check["problems"], room))
    free = list(answer["unclaimed"])
    if not free:
        return Verdict("allow")
    return _unclaimed(ctx, key, mine, free, intent)


def _check_edit(
    ctx: HookContext, key: str | None, paths: Sequence[str], edits: list[dict[str, Any]] | None
) -> Any:
    """The ``check_edit`` operation: typed in process (no body model to import), else one
    request."""
    asked: dict[str, Any] = {
        "session_id": key,
        "worktree": str(ctx.top),
        "branch": checked_out_branch(ctx.top),
        "edits": edits,
    }
    typed = getattr(ctx.client, "check_edit_typed", None)
    if typed is not None:
        return typed(ctx.repo, list(paths), **asked)
    return ctx.client.check_edit(ctx.repo, list(paths), **asked)


def _symbol_edits(
    top: Path, paths: Sequence[str], changes: Mapping[str, Sequence[Change]]
) -> list[dict[str, Any]]:
    from detente.harness.symbol_edits import planned_edit

    out: list[dict[str, Any]] = []
    for rel in paths:
        found = planned_edit(top / rel, rel, changes.get(rel, ()))
        if found is not None:
            out.append({"path": rel, "symbols": list(found[0]), "outside": found[1]})
    return out


def _unclaimed(
    ctx: HookContext, key: str | None, mine: dict[str, Any] | None, free: list[str], intent: str
) -> Verdict:
    """The repository's policy for files no claim holds (``[harness] unclaimed``)."""
    named = ", ".join(free[:4])
    if ctx.unclaimed == "require":
        how = (
            f"detente claim scope add {mine['id']} -p {free[0]}"
            if mine
            else f'detente claim open -o "..." -p {free[0]}'
        )
        return Verdict(
            "deny",
            short(
                f"detente: {named} is not in any claim and this repository requires a claim "
                f'before an edit ([harness] unclaimed = "require"). Claim it first: {how}'
            ),
        )
    if ctx.unclaimed == "auto-claim":
        return _auto_claim(ctx, key, mine, free, intent)
    whose = f"your claim {mine['id']}" if mine else "any claim"
    how = (
        f"detente claim scope add {mine['id']} -p {free[0]}"
        if mine
        else f'detente claim open -o "..." -p {free[0]}'
    )
    return Verdict(
        "allow",
        context=short(
            f"detente: {named} is outside {whose}; no other claim holds it. Claim it so "
            f"others see your work: {how}"
        ),
    )


def _auto_claim(
    ctx: HookContext, key: str | None, mine: dict[str, Any] | None, free: list[str], intent: str
) -> Verdict:
    """Add ``free`` to the session's claim, or open one for the session."""
    if mine is not None:
        view: Any = ctx.client.scope_change(
            mine["id"],
            expected_claim_revision=int(mine["revision"]),
            add_paths=free,
            reason="auto-claimed by the harness hook",
        )
        claim = view["claim"]
    else:
        from detente.client.seeds import claim_seed
        from detente.errors import BranchInUse, ValidationError

        def seed(worktree: str | None) -> Any:
            return claim_seed(
                repo=ctx.repo,
                objective=intent or f"edit {', '.join(free[:4])}",
                agent=(key or "harness").split("-", 1)[0],
                session=key,
                base_commit=ctx.info.head_oid or "HEAD",
                paths=free,
                ttl=1800,
                worktree=worktree,
            )

        try:
            view = ctx.client.open_claim(seed(str(ctx.top)))
        except (BranchInUse, ValidationError) as refused:
            # Another claim works in this checkout, or it is the repository's own working
            # tree (no claim may take it): the session's own claim is found by its session.
            if isinstance(refused, ValidationError) and refused.field != "worktree":
                raise
            view = ctx.client.open_claim(seed(None))
        claim = view["claim"]
    if claim["status"] != "active":
        meeting = (view.get("meeting") or {}).get("id")
        room = f" in meeting {meeting}" if meeting else ""
        return Verdict(
            "deny",
            short(
                f"detente: claimed {', '.join(free[:4])} for you as {claim['id']}, but another "
                f"claim overlaps: it is {claim['status']}{room}. Settle it: detente meeting "
                f"show {meeting or '<id>'}"
            ),
        )
    return Verdict("allow", context=f"detente: {', '.join(free[:4])} added to claim {claim['id']}.")
