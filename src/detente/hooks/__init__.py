"""Git hooks that enforce what detente coordinates.

- ``pre-commit`` (a claim's worktree; ``detente hooks install [--warn]``): refuses a
  commit whose staged paths another live claim holds, or that lie outside the committing
  claim's targets, naming the other claim and its agent (``--warn`` only prints). The
  committing claim is ``$DETENTE_CLAIM``, else ``git config detente.claim``, else the one
  live claim on the checked-out branch.
- ``pre-receive`` (a shared bare repository; ``detente hooks install --server BARE``):
  refuses an update of a protected ref (``git config detente.protectedRef``, default the
  repository's HEAD branch) unless every commit it adds carries ``Detente-Claim: <id>``
  naming a ``ready_for_review``/``integrated`` claim whose targets cover the commit's
  paths and no other live claim holds them; a deletion or a non-fast-forward is refused.
  It asks the server at ``git config detente.url`` and fails closed (refuses, and says
  so) when the server is unreachable. ``post-receive`` then reports the landed commits'
  claims, which become ``integrated``.

The installed scripts (written by :mod:`detente.vcs.hook_scripts`) run
``python -m detente.hooks <hook>`` with the interpreter that installed them; this package
imports nothing heavy at start-up. The hooks talk to detente through
:func:`detente.client.connect`, like every other adapter.
"""

from __future__ import annotations
