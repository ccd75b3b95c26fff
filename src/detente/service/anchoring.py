"""A served log's anchor at work: start, periodic and final checkpoints, the audit's check.

:mod:`detente.service.anchor` says what a checkpoint is and how the audit checks one;
this module runs it for a :class:`~detente.service.core.ServiceCore`:

- :func:`start_anchor` (the server's start, after the projections are warm): make or load
  the key, raise every repository's fencing counter above the newest checkpoint's token
  (plus twice the interval), and checkpoint the head found;
- :func:`checkpoint_soon` (after a commit that takes the log the interval past the last
  checkpoint): one checkpoint on a worker thread, never two at once, so no command waits
  for git;
- :func:`stop_anchor` (a clean shutdown): the last checkpoint, written before the process
  ends;
- :func:`anchor_findings` (``audit verify``): the store against the checkpoints and each
  served repository's default branch.

A checkpoint git cannot write is logged (``detente.anchor``) and costs nothing else: the
next one is due at once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from detente.clock import format_time
from detente.errors import DetenteError
from detente.service.anchor import Anchor

if TYPE_CHECKING:
    from detente.service.core import ServiceCore

__all__ = [
    "ANCHOR_KEY_ENV",
    "anchor_findings",
    "anchor_for",
    "checkpoint_now",
    "checkpoint_soon",
    "start_anchor",
    "stop_anchor",
]

#: The environment variable naming the anchor key's file.
ANCHOR_KEY_ENV = "DETENTE_ANCHOR_KEY"


def _warn(message: str, detail: str) -> None:
    import logging  # on the first warning only: a CLI call never pays for it

    logging.getLogger("detente.anchor").warning(message, detail)


_writing = threading.Lock()
#: Seconds a clean shutdown waits for the checkpoint being written.
_JOIN_SECONDS = 30.0
_KEY_FILE = "detente-anchor.key"


def anchor_for(common_dir: Path, repo: Path, store: str) -> Anchor:
    """The anchor of ``store`` kept in ``repo``: its key ``$DETENTE_ANCHOR_KEY``, else
    ``detente-anchor.key`` in the repository's common git directory (beside the
    ``detente/`` directory of the default store, not in it)."""
    named = os.environ.get(ANCHOR_KEY_ENV)
    return Anchor(repo, Path(named) if named else common_dir / _KEY_FILE, store)


def start_anchor(core: ServiceCore) -> None:
    """Start anchoring a served log (no-op without an anchor; see the module docstring).

    Raises:
        ValidationError: the anchor key is unreadable or not an Ed25519 key.
    """
    anchor = core.anchor
    if anchor is None:
        return
    try:
        floor = anchor.start()
    except DetenteError as exc:
        if exc.code == "validation_error":
            raise
        _warn("cannot read the log's checkpoints: %s", exc.detail)
        floor = 0
    core.raise_fencing_floor(floor)
    checkpoint_now(core)


def stop_anchor(core: ServiceCore) -> None:
    """The last checkpoint of a clean shutdown, after the one being written (no-op when
    not started)."""
    anchor = core.anchor
    if anchor is not None and anchor.started:
        worker = anchor.worker
        if worker is not None:
            worker.join(_JOIN_SECONDS)
        checkpoint_now(core)


def checkpoint_now(core: ServiceCore) -> None:
    """Write a checkpoint of the store's head now (failures are logged)."""
    anchor = core.anchor
    if anchor is None or not anchor.started:
        return
    with _writing:
        try:
            seq, head_hash = core.store.head()
            at = format_time(core.clock.now())
            anchor.write(seq, head_hash, core.highest_fencing_token(), at)
        except DetenteError as exc:
            _warn("cannot write a checkpoint of the log: %s", exc.detail)


def checkpoint_soon(core: ServiceCore) -> None:
    """Write a checkpoint on a worker thread unless one is being written."""
    anchor = core.anchor
    if anchor is None or (anchor.worker is not None and anchor.worker.is_alive()):
        return
    worker = threading.Thread(target=checkpoint_now, args=(core,), name="detente-checkpoint")
    anchor.worker = worker
    worker.start()


def anchor_findings(core: ServiceCore) -> list[str]:
    """What the store's anchors contradict (see :meth:`Anchor.check`)."""
    from detente.vcs.landed import claims_on, protected_refs

    anchor = core.anchor
    if anchor is None:
        return []
    landed: dict[str, dict[str, str]] = {}
    for repo in core.repos.values():
        if repo.path is None or repo.refs is not None:
            continue
        try:
            found = landed[repo.name] = {}
            for ref in protected_refs(repo.path, repo.default_branch):
                found.update(claims_on(repo.path, ref))
        except DetenteError as exc:
            return [f"{repo.name}: cannot read {repo.default_branch} ({exc.code}: {exc.detail})"]
    return anchor.check(core.store, landed)
