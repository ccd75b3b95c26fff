"""The server-side hooks' entry points: ``pre-receive``, ``update``, ``reference-transaction``.

Each reads what git hands it and runs the one check of :mod:`detente.hooks.refcheck`;
they differ only in their input and in how they avoid checking an update twice
(:mod:`detente.hooks.checked`):

- ``pre-receive`` (stdin ``<old> <new> <ref>`` lines, once per push, objects still in the
  quarantine): checks every protected ref of the push and records what it accepted;
- ``update <ref> <old> <new>`` (once per pushed ref): passes what ``pre-receive`` accepted,
  checks the rest (a server whose ``pre-receive`` is not detente's);
- ``reference-transaction <state>`` (stdin lines; every ref transaction of the repository,
  git >= 2.28): acts in the ``prepared`` state only, where a refusal aborts the
  transaction; ``committed`` and ``aborted`` pass at once. It runs while git holds the
  transaction's ref locks, so it only queries git (never updates a ref: no recursion,
  no second lock).
"""

from __future__ import annotations

from detente.hooks.checked import Checked
from detente.hooks.gitread import HookRepo
from detente.hooks.refcheck import RefUpdate, check_updates, parse_updates

__all__ = ["pre_receive", "reference_transaction", "update"]


def pre_receive(stdin: str, repo: HookRepo | None = None) -> int:
    """Check a push (0 accepts it, 1 refuses every ref of it)."""
    here = repo or HookRepo()
    checked = Checked(here)
    return check_updates(
        here, parse_updates(stdin), already_checked=checked, on_accept=checked.record
    )


def update(argv: list[str], repo: HookRepo | None = None) -> int:
    """Check one pushed ref, ``argv`` = ``[ref, old, new]`` (0 accepts, 1 refuses it)."""
    if len(argv) != 3:
        from detente.hooks.refcheck import say

        say(["the update hook expects <ref> <old> <new>: refusing"])
        return 1
    here = repo or HookRepo()
    ref, old, new = argv
    return check_updates(here, [RefUpdate(old, new, ref)], already_checked=Checked(here))


def reference_transaction(state: str, stdin: str, repo: HookRepo | None = None) -> int:
    """Check a ref transaction in its ``prepared`` state (1 aborts the transaction)."""
    if state != "prepared":
        return 0
    here = repo or HookRepo()
    return check_updates(here, parse_updates(stdin), already_checked=Checked(here))
