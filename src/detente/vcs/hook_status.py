"""``detente hooks status``: which hooks are installed, by which detente, and are they current.

A hook is ``current`` when its script is exactly what this detente would install now
(same version, same interpreter), ``outdated`` when an other detente (or interpreter)
wrote it (reinstall with ``detente hooks install``), ``foreign`` when detente did not write
it, ``missing`` when there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from detente.errors import ValidationError
from detente.vcs.git import Git
from detente.vcs.hook_scripts import (
    HOOK_MARKER,
    LOCAL_HOOKS,
    SERVER_HOOKS,
    VERSION_MARKER,
    hook_script,
    hooks_path,
)

__all__ = ["HookState", "HooksStatus", "hooks_status", "parse_git_version"]

#: The first git release with the ``reference-transaction`` hook.
REFERENCE_TRANSACTION_SINCE = (2, 28)

State = Literal["current", "outdated", "foreign", "missing"]


@dataclass(frozen=True)
class HookState:
    """One hook script.

    Attributes:
        hook: the hook's name (``pre-receive``).
        path: where git looks for it.
        state: ``current``, ``outdated``, ``foreign`` or ``missing``.
        version: the detente version that wrote it (None: not detente's, or missing).
        warn: a ``pre-commit`` installed with ``--warn``.
    """

    hook: str
    path: Path
    state: State
    version: str | None = None
    warn: bool = False

    def to_wire(self) -> dict[str, Any]:
        """``{hook, path, state, version, warn}``."""
        return {
            "hook": self.hook,
            "path": str(self.path),
            "state": self.state,
            "version": self.version,
            "warn": self.warn,
        }


@dataclass(frozen=True)
class HooksStatus:
    """The hooks of one repository.

    Attributes:
        kind: ``local`` (a claim's repository) or ``server`` (the shared repository).
        hooks: one entry per hook detente installs there.
        config: the ``detente.*`` git configuration (server only).
        git_version: the local git's version, e.g. ``(2, 39, 5)``.
        hooks_dir: where git looks for the hooks (``core.hooksPath`` honoured).
        inside: ``hooks_dir`` is the repository's own (not a directory shared with
            other repositories, :class:`~detente.vcs.hook_scripts.HooksPath`).
        origin: where ``core.hooksPath`` is set, None when unset.
    """

    kind: Literal["local", "server"]
    hooks: tuple[HookState, ...]
    config: dict[str, list[str]]
    git_version: tuple[int, ...]
    hooks_dir: Path | None = None
    inside: bool = True
    origin: str | None = None

    @property
    def reference_transaction(self) -> bool:
        """Whether this git runs the ``reference-transaction`` hook (>= 2.28)."""
        return self.git_version[:2] >= REFERENCE_TRANSACTION_SINCE

    @property
    def ok(self) -> bool:
        """Every hook present and current, in the repository's own hooks directory."""
        return self.inside and all(h.state == "current" for h in self.hooks)

    def to_wire(self) -> dict[str, Any]:
        """``{kind, ok, hooks[], config{}, gitVersion, referenceTransaction, hooksDir,
        hooksDirInside, hooksPathOrigin}``."""
        return {
            "kind": self.kind,
            "ok": self.ok,
            "hooks": [h.to_wire() for h in self.hooks],
            "config": self.config,
            "gitVersion": ".".join(str(n) for n in self.git_version),
            "referenceTransaction": self.reference_transaction,
            "hooksDir": str(self.hooks_dir) if self.hooks_dir else None,
            "hooksDirInside": self.inside,
            "hooksPathOrigin": self.origin,
        }


def hooks_status(repo: Path, *, server: bool) -> HooksStatus:
    """Inspect the hooks of ``repo``: the server-side ones (``server``) or ``pre-commit``.

    Raises:
        ValidationError: ``repo`` is not a git repository (field ``repo``).
    """
    git = Git(repo)
    if not git.run("rev-parse", "--git-dir", check=False).ok:
        raise ValidationError(f"{repo} is not a git repository", field="repo")
    located = hooks_path(git)
    where = located.path
    names = SERVER_HOOKS if server else LOCAL_HOOKS
    states = tuple(_state(where / name, name) for name in names)
    config: dict[str, list[str]] = {}
    if server:
        out = git.run("config", "--get-regexp", r"^detente\.", check=False)
        for line in out.stdout.splitlines() if out.ok else []:
            key, _, value = line.partition(" ")
            config.setdefault(key, []).append(value)
    version = parse_git_version(git.text("version"))
    kind: Literal["local", "server"] = "server" if server else "local"
    return HooksStatus(kind, states, config, version, where, located.inside, located.origin)


def parse_git_version(text: str) -> tuple[int, ...]:
    """``git version 2.39.5`` -> ``(2, 39, 5)`` (``(0,)`` when unreadable)."""
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not found:
        return (0,)
    return tuple(int(n) for n in found.groups() if n is not None)


def _state(path: Path, hook: str) -> HookState:
    if not path.exists():
        return HookState(hook, path, "missing")
    text = path.read_text(errors="replace")
    if HOOK_MARKER not in text:
        return HookState(hook, path, "foreign")
    found = re.search(rf"^{re.escape(VERSION_MARKER)}: (\S+)$", text, re.MULTILINE)
    version = found.group(1) if found else None
    warn = hook == "pre-commit" and " --warn " in text
    expected = hook_script(hook, *(["--warn"] if warn else []))
    return HookState(hook, path, "current" if text == expected else "outdated", version, warn)
