"""Where a hook event happens: the repository, its client, the policy, the session's claim.

:func:`open_context` opens what a hook needs once per call: the worktree the event
happens in (``git rev-parse``, :func:`detente.vcs.repo.open_repo`), the client
(a running server, else local mode on the repository's store when it has one:
:func:`detente.client.connect.connect_server`, :func:`~detente.client.local_check.existing_store`),
and the ``[harness]`` policy of ``detente.toml``. :func:`session_claim` finds the claim
the harness session works under: a claim of the session registered at session start
(its claims carry the session id), else the live claim whose worktree is this one,
else the one live claim of the checked-out branch; never a claim of another harness
session (two sessions in one checkout each work under their own).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detente.client import Client
    from detente.vcs.repo import RepoInfo

__all__ = [
    "LIVE",
    "HookContext",
    "NotCoordinated",
    "checked_out_branch",
    "open_context",
    "session_claim",
    "session_key",
]

#: The ``[harness]`` defaults (:data:`detente.config.keys.HARNESS_KEYS`' first choices).
DEFAULTS = {"unclaimed": "advise", "failure": "open"}

#: Claim statuses that still hold (or wait for) their targets.
LIVE = ("active", "negotiating", "blocked", "suspended", "ready_for_review", "draft")


class NotCoordinated(Exception):
    """Detente does not coordinate this directory (no repository, no server, no store)."""


class HookContext:
    """What one hook call works with.

    Attributes:
        client: the client (close it when done).
        info: the repository of the worktree the event happens in.
        repo: the repository's name for the client.
        top: the worktree's top directory.
        unclaimed: ``[harness] unclaimed`` (advise, auto-claim, require).
        mode: ``server`` or ``local``.
        remembered: ``repo`` is the name remembered from an earlier call
            (:mod:`detente.harness.server_names`), not the server's answer of this one.
    """

    def __init__(
        self,
        client: Client,
        info: RepoInfo,
        repo: str,
        top: Path,
        unclaimed: str,
        mode: str,
        *,
        remembered: bool = False,
    ) -> None:
        self.client = client
        self.info = info
        self.repo = repo
        self.top = top
        self.unclaimed = unclaimed
        self.mode = mode
        self.remembered = remembered

    def close(self) -> None:
        self.client.close()


def session_key(harness: str, session: str | None) -> str | None:
    """The detente agent session id of a harness session: ``<harness>-<its id>`` (at most
    128 characters of letters, digits, ``.``, ``_`` and ``-``); None without an id. An id
    that does not fit as it is (another character, longer) keeps a readable prefix and
    ends in a digest of the whole id, so two harness sessions never share one key."""
    if not session:
        return None
    raw = f"{harness}-{session}"
    clean = re.sub(r"[^A-Za-z0-9._-]", "_", raw)
    if clean == raw and len(raw) <= 128:
        return raw
    import hashlib

    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{clean[:111]}-{digest}"


def policy(top: Path) -> dict[str, str]:
    """The ``[harness]`` keys of the repository's ``detente.toml`` (defaults filled in).

    A file without a ``[harness]`` table gives the defaults without loading the
    configuration (the hook runs before every edit); one with it is loaded and validated
    by :func:`detente.config.load_config`.

    Raises:
        ValidationError: the file is invalid.
    """
    try:
        text = (top / "detente.toml").read_text(encoding="utf-8")
    except FileNotFoundError:
        return dict(DEFAULTS)
    except (OSError, UnicodeDecodeError):
        text = "[harness]"  # unreadable: let the loader say why
    if "harness" not in text:
        return dict(DEFAULTS)
    from detente.config import load_config

    return dict(load_config(top).harness)


def open_context(where: Path, *, remembered: bool = True) -> HookContext:
    """Open the repository of ``where`` and its client.

    In server mode the server's name for the repository is the one remembered from an
    earlier call (``remembered``, :mod:`detente.harness.server_names`), else asked and
    remembered.

    Raises:
        NotCoordinated: ``where`` is in no git repository, or no server serves it and it
            has no store.
        DetenteError: ``server_unavailable`` (a named server), ``validation_error``,
            ``store_unavailable``.
    """
    from detente.client.connect import connect_server
    from detente.client.local_check import existing_store
    from detente.errors import ValidationError

    here = where if where.is_dir() else where.parent
    while not here.exists() and here != here.parent:
        here = here.parent
    from detente.harness import server_names

    used: list[str] = []

    def known(url: str, info: RepoInfo) -> str | None:
        name = server_names.remembered(url, info) if remembered else None
        if name is not None:
            used.append(name)
        return name

    try:
        client, info = connect_server(here, known_name=known)
    except ValidationError as exc:
        if exc.field == "repo" or "not a git" in exc.detail or "repository" in exc.detail:
            raise NotCoordinated(exc.detail) from None
        raise
    rules = policy(info.main_worktree or info.path)
    if client is not None:
        name = client.repo_name or info.name
        if not used and client.repo_name:
            server_names.remember(client.url, info, client.repo_name)
        return HookContext(
            client, info, name, info.path, rules["unclaimed"], "server", remembered=bool(used)
        )
    if existing_store(info) is None:
        raise NotCoordinated("this repository has no detente store and no server")
    from detente.client.connect import open_local

    local = open_local(info.path, repo_name=info.name, repo_path=info.path, opened=info)
    return HookContext(local, info, info.name, info.path, rules["unclaimed"], "local")


def _same(a: str | None, b: Path) -> bool:
    if not a:
        return False
    try:
        return Path(a).resolve() == b.resolve()
    except OSError:
        return False


def session_claim(ctx: HookContext, key: str | None) -> dict[str, Any] | None:
    """The claim record the session works under, or None (see the module docstring)."""
    client = ctx.client
    if key:
        mine = [
            c for c in client.session_claims(key, repo=ctx.repo)["claims"] if c["status"] in LIVE
        ]
        here = [c for c in mine if _same(c.get("worktree"), ctx.top)]
        if here or len(mine) == 1:
            return dict((here or mine)[0])
    live = [
        c
        for c in client.list_claims(repo=ctx.repo)["claims"]
        if c["status"] in LIVE and not _another_harness_session(c, key)
    ]
    here = [c for c in live if _same(c.get("worktree"), ctx.top)]
    if len(here) == 1:
        return dict(here[0])
    branch = checked_out_branch(ctx.top)
    if branch:
        on_branch = [c for c in live if c.get("branch") == branch]
        if len(on_branch) == 1:
            return dict(on_branch[0])
    return None


def _another_harness_session(claim: Mapping[str, Any], key: str | None) -> bool:
    """Whether ``claim`` belongs to a harness session other than ``key`` (two sessions in
    one checkout: neither works under the other's claim)."""
    from detente.domain.agents.session_claims import harness_session

    agent = claim.get("agent")
    owner = agent.get("sessionId") if isinstance(agent, dict) else None
    return isinstance(owner, str) and owner != key and harness_session(owner)


def checked_out_branch(top: Path) -> str | None:
    """The checked-out branch, read from the files (no git process)."""
    dot = top / ".git"
    try:
        if dot.is_file():
            first = dot.read_text(encoding="utf-8").splitlines()[0]
            head = (top / first.removeprefix("gitdir: ").strip()) / "HEAD"
        else:
            head = dot / "HEAD"
        text = head.read_text(encoding="utf-8").strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return text.removeprefix("ref: refs/heads/") if text.startswith("ref: refs/heads/") else None
