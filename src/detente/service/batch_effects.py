"""What commits with a group-committed batch besides its events (:class:`BatchEffect`).

A memory write is a commit on the integration branch (:mod:`detente.service.memory_branch`)
that must land exactly when the batch's events do: staged while the batch's commands are
decided, written before the store commits, undone when the store rolls back, and followed
up (checkouts) after the commands were answered. A lost race on that resource
(:class:`Redecide`) decides the whole batch again on fresh state instead of dropping it.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["MAX_REDECIDE", "BatchEffect", "Redecide"]

#: Times a batch is decided again because an effect's resource moved under it
#: (:class:`Redecide`) before its commands are run alone.
MAX_REDECIDE = 64


class Redecide(Exception):
    """Raised by :meth:`BatchEffect.prepare`: what the batch decided on moved (the
    integration branch, for a memory commit); the transaction rolls back and the batch is
    decided again on fresh state, never dropped (:data:`MAX_REDECIDE` times at most)."""


class BatchEffect(Protocol):
    """Work outside the store that a batch's commands stage and that commits with it
    (memory documents' commits on the integration branch).

    ``begin`` runs before each attempt of a batch; ``mark`` before each command is
    decided (``retract`` undoes that command's staging when it is deferred); ``prepare``
    inside the store transaction, after every command, before the commit (it may raise
    :class:`Redecide`);
    ``abort`` when that transaction rolled back after ``prepare`` ran or failed;
    ``finish`` after the store committed and the batch's commands were answered.
    """

    def begin(self, repo: str) -> None: ...

    def mark(self, repo: str) -> None:
        """A command is about to be decided."""
        ...

    def retract(self, repo: str) -> None:
        """The command decided since the last :meth:`mark` waits for the next batch:
        forget what it staged."""
        ...

    def prepare(self, repo: str) -> None: ...

    def abort(self, repo: str) -> None: ...

    def finish(self, repo: str) -> None: ...
