"""Updates detente has already checked, so that no update is checked twice.

Two cases, both verified with the repository's key (:mod:`detente.vcs.hookpass`):

- detente's own integration moves the ref with a pass in ``$DETENTE_INTEGRATION``;
- a push runs ``pre-receive`` (all refs), then ``update`` (each ref) and
  ``reference-transaction`` (each transaction) in the same ``git receive-pack`` process.
  When ``pre-receive`` accepts, it records the accepted updates in
  ``<git common dir>/detente/checked/<receive-pack pid>`` (one ``<old> <new> <ref> <mac>``
  line each); the later hooks of that process pass exactly those updates, and
  ``post-receive`` removes the record. Records of processes that no longer run are
  removed whenever a new one is written.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from detente.hooks.gitread import HookRepo
from detente.hooks.refcheck import RefUpdate
from detente.vcs.hookpass import PASS_ENV, key_path, mac, read_key, valid_pass

__all__ = ["Checked"]


class Checked:
    """The already-checked updates of the git process that started this hook.

    Args:
        repo: the repository the hook runs for.
        git_pid: the git process that runs the hook (default: this process's parent,
            since the installed script ``exec``\\ s Python).
    """

    def __init__(self, repo: HookRepo, git_pid: int | None = None) -> None:
        self.repo = repo
        self.git_pid = git_pid if git_pid is not None else os.getppid()

    @cached_property
    def _common(self) -> Path:
        return self.repo.common_dir()  # read only when a protected ref is updated

    @cached_property
    def key(self) -> bytes | None:
        """The repository's key (None: no server-side hooks were installed with one)."""
        return read_key(self._common)

    @property
    def records(self) -> Path:
        """The directory of the per-process records."""
        return key_path(self._common).parent / "checked"

    def __call__(self, update: RefUpdate) -> bool:
        """True when ``update`` was checked: an integration pass or a recorded push."""
        old, new, ref = update.old, update.new, update.ref
        if valid_pass(os.environ.get(PASS_ENV), self.key, ref, old, new):
            return True
        if self.key is None:
            return False
        try:
            lines = self._record().read_text().splitlines()
        except OSError:
            return False
        return f"{old} {new} {ref} {mac(self.key, ref, old, new)}" in lines

    def record(self, updates: Sequence[RefUpdate]) -> None:
        """Remember updates this process's ``pre-receive`` accepted (no key: nothing)."""
        if self.key is None:
            return
        self.records.mkdir(parents=True, exist_ok=True)
        self._prune()
        lines = [f"{u.line()} {mac(self.key, u.ref, u.old, u.new)}\n" for u in updates]
        self._record().write_text("".join(lines))

    def forget(self) -> None:
        """Remove this process's record (``post-receive``: the push is over)."""
        with contextlib.suppress(OSError):
            self._record().unlink()

    def _record(self) -> Path:
        return self.records / str(self.git_pid)

    def _prune(self) -> None:
        for path in self.records.iterdir():
            if path.name.isdigit() and not _running(int(path.name)):
                with contextlib.suppress(OSError):
                    path.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
