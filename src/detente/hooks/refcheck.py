"""The check of protected ref updates, shared by the three server-side hooks.

``pre-receive`` (every push, all refs at once), ``update`` (every pushed ref, for servers
whose git predates ``reference-transaction``) and ``reference-transaction`` (every ref
update in the repository, git >= 2.28: ``update-ref``, ``fetch . a:b``, ``merge`` in a
worktree, libgit2 tools) all run :func:`check_updates`:

1. only updates of protected refs are checked (``git config detente.protectedRef``,
   default the ref HEAD names); a deletion of one is refused outright;
2. an update detente has already checked passes with no round trip: its own integration
   (the pass of :mod:`detente.vcs.hookpass`), or a ref of a push whose ``pre-receive``
   check accepted it (:mod:`detente.hooks.checked`);
3. every other update is sent to the server (``POST /v1/hooks/pre-receive``), which applies
   the integration rule: each added commit names a ``ready_for_review``/``integrated``
   claim whose targets cover its paths, held by no other live claim.

A repository without any ``detente.*`` git configuration is not checked at all (a
hooks directory shared by many repositories, ``core.hooksPath``, reaches repositories
detente was never installed in); nothing is written there.

The server must answer within ``git config detente.timeout`` seconds (default 5) or the
update is refused (fail closed), as it is when the server is unreachable or not
configured. ``git config detente.warn true`` (``hooks install --bare BARE --warn``)
turns every refusal into a printed warning.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from detente.errors import DetenteError, EvidenceRejected
from detente.hooks.gitread import HookRepo
from detente.hooks.symbol_edits import with_symbol_edits
from detente.vcs.refs import ZERO_OID

__all__ = ["DEFAULT_TIMEOUT", "RefUpdate", "ServerSide", "check_updates", "parse_updates"]

#: Seconds the server has to answer before the update is refused.
DEFAULT_TIMEOUT = 5.0


def say(lines: Sequence[str]) -> None:
    """Print lines to stderr, each prefixed ``detente:`` (git relays it to the pusher)."""
    sys.stderr.write("".join(f"detente: {line}\n" for line in lines))


@dataclass(frozen=True)
class RefUpdate:
    """One ref update as a hook sees it: ``<old> <new> <ref>``."""

    old: str
    new: str
    ref: str

    def line(self) -> str:
        """The hook input line, ``<old> <new> <ref>``."""
        return f"{self.old} {self.new} {self.ref}"


def parse_updates(text: str) -> list[RefUpdate]:
    """``<old> <new> <ref>`` lines (hook stdin) as updates; malformed lines are skipped."""
    out: list[RefUpdate] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.append(RefUpdate(parts[0], parts[1], parts[2]))
    return out


@dataclass(frozen=True)
class ServerSide:
    """The shared repository's detente settings (``git config detente.*``).

    Attributes:
        url: the server (``$DETENTE_URL`` wins over ``detente.url``), None when unset.
        name: the repository's name on the server (``detente.repo``, else the directory
            name without ``.git``).
        protected: protected refs (``detente.protectedRef``, else HEAD's ref).
        warn: ``detente.warn``: print refusals, refuse nothing.
        timeout: ``detente.timeout``: seconds the server has to answer.
        installed: the repository has ``detente.*`` configuration at all (``hooks
            install --bare`` writes it); without any, the hooks check nothing.
    """

    url: str | None
    name: str
    protected: tuple[str, ...]
    warn: bool = False
    timeout: float = DEFAULT_TIMEOUT
    installed: bool = True

    @classmethod
    def read(cls, repo: HookRepo) -> ServerSide:
        """Read the settings with one ``git config`` call (two when no ref is configured)."""
        out = repo.git.run("config", "--get-regexp", r"^detente\.", check=False)
        values: dict[str, list[str]] = {}
        for line in out.stdout.splitlines() if out.ok else []:
            key, _, value = line.partition(" ")
            values.setdefault(key.lower(), []).append(value.strip())

        def last(key: str) -> str | None:
            found = values.get(key)
            return found[-1] if found else None

        protected = tuple(v for v in values.get("detente.protectedref", []) if v)
        if not protected:
            protected = (repo.head_ref() or "refs/heads/main",)
        name = last("detente.repo") or repo.cwd.resolve().name.removesuffix(".git")
        return cls(
            url=os.environ.get("DETENTE_URL") or last("detente.url") or None,
            name=name,
            protected=protected,
            warn=(last("detente.warn") or "").lower() in ("true", "yes", "on", "1"),
            timeout=_seconds(last("detente.timeout")),
            installed=bool(values),
        )


def _seconds(text: str | None) -> float:
    try:
        value = float(text) if text else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if 0 < value <= 600 else DEFAULT_TIMEOUT


@dataclass
class _Outcome:
    failures: list[str] = field(default_factory=list)
    error: DetenteError | None = None
    done: bool = False


def check_updates(
    repo: HookRepo,
    updates: Sequence[RefUpdate],
    *,
    settings: ServerSide | None = None,
    already_checked: Callable[[RefUpdate], bool] = lambda _: False,
    on_accept: Callable[[Sequence[RefUpdate]], None] = lambda _: None,
) -> int:
    """Check the protected ones of ``updates`` (see the module docstring).

    Args:
        repo: the repository the hook runs for.
        updates: the hook's ref updates; an ``old`` of zeros for an existing ref (a
            ``reference-transaction`` of an update that named no old value) is read
            from the ref.
        settings: the repository's settings (default: read them).
        already_checked: True for an update detente checked before this hook ran.
        on_accept: called with the protected updates the server accepted.

    Returns:
        0 to let git proceed, 1 to refuse (every reason printed, prefixed ``detente:``).
    """
    cfg = settings or ServerSide.read(repo)
    if not cfg.installed:
        return 0  # no detente here: the hooks came from a shared hooks directory
    protected = set(cfg.protected)
    mine = [_with_old(repo, u) for u in updates if u.ref in protected]
    mine = [u for u in mine if not already_checked(u)]
    if not mine:
        return 0
    refs = ", ".join(dict.fromkeys(u.ref for u in mine))
    deleted = [u.ref for u in mine if u.new == ZERO_OID]
    if deleted:
        return _refuse(cfg, [f"refusing to delete protected ref {', '.join(deleted)}"])
    if not cfg.url:
        return _refuse(
            cfg, [f"no detente server configured (git config detente.url): refusing {refs}"]
        )
    try:
        bodies = [_body(repo, cfg, u) for u in mine]
    except DetenteError as exc:
        return _refuse(cfg, [f"cannot read the update of {refs} ({exc.code}: {exc.detail})"])
    outcome = _ask(cfg.url, bodies, cfg.timeout)
    if not outcome.done:
        return _refuse(
            cfg,
            [
                f"the detente server at {cfg.url} did not answer within {cfg.timeout:g} s",
                f"failing closed: refusing the update of protected ref {refs}",
            ],
        )
    if outcome.error is not None:
        error = outcome.error
        if error.code == "server_unavailable":
            lines = [f"the detente server at {cfg.url} is unreachable ({error.detail})"]
        else:
            lines = [f"cannot check the update ({error.code}: {error.detail})"]
        closed = f"failing closed: refusing the update of protected ref {refs}"
        return _refuse(cfg, [*lines, closed])
    if outcome.failures:
        return _refuse(
            cfg,
            [
                f"update of {refs} refused:",
                *(f"  {f}" for f in outcome.failures),
                "protected refs move only by detente integrations (detente claim complete)",
            ],
        )
    on_accept(mine)
    return 0


def _with_old(repo: HookRepo, update: RefUpdate) -> RefUpdate:
    if update.old != ZERO_OID:
        return update
    current = repo.resolve(update.ref)  # inside a transaction: the value before it
    return RefUpdate(current, update.new, update.ref) if current else update


def _body(repo: HookRepo, cfg: ServerSide, update: RefUpdate) -> dict[str, Any]:
    known: list[str] = []
    if update.old == ZERO_OID:
        # A new protected ref adds every commit no other protected ref has: a commit on
        # some topic branch is not integrated by being there.
        known = [r for r in cfg.protected if r != update.ref and repo.resolve(r)]
    commits = with_symbol_edits(repo, repo.added_commits(update.old, update.new, known=known))
    forward = update.old == ZERO_OID or repo.is_ancestor(update.old, update.new)
    return {
        "repo": cfg.name,
        "ref": update.ref,
        "oldOid": update.old,
        "newOid": update.new,
        "fastForward": forward,
        "commits": [c.to_wire() for c in commits],
    }


def _ask(url: str, bodies: list[dict[str, Any]], timeout: float) -> _Outcome:
    """Ask the server about every body, giving up after ``timeout`` seconds in all (the
    worker is a daemon thread: a hung connection never keeps the hook alive)."""
    outcome = _Outcome()

    def work() -> None:
        from detente.client import connect

        try:
            with connect(url, None) as client:
                for body in bodies:
                    try:
                        client.pre_receive(body)
                    except EvidenceRejected as exc:
                        outcome.failures += exc.failures
        except DetenteError as exc:
            outcome.error = exc
        outcome.done = True

    worker = threading.Thread(target=work, name="detente-hook-check", daemon=True)
    worker.start()
    worker.join(timeout)
    return outcome


def _refuse(cfg: ServerSide, lines: list[str]) -> int:
    if cfg.warn:
        say([*lines, "warning only (git config detente.warn): letting the update through"])
        return 0
    say(lines)
    return 1
