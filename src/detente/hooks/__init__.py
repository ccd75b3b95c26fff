"""Git hooks that enforce what detente coordinates.

- ``pre-commit`` (a claim's worktree; ``detente hooks install [--warn]``): refuses a
  commit whose staged paths another live claim holds, or that lie outside the committing
  claim's targets, naming the other claim and its agent (``--warn`` only prints). The
  committing claim is ``$DETENTE_CLAIM``, else ``git config detente.claim``, else the one
  live claim on the checked-out branch.
- ``pre-receive``, ``update`` and ``reference-transaction`` (the shared repository;
  ``detente hooks install --bare BARE``, formerly ``--server BARE``): refuse an update of
  a protected ref (``git config detente.protectedRef``, default the repository's HEAD
  branch) unless every commit it adds carries ``Detente-Claim: <id>`` naming a
  ``ready_for_review``/``integrated`` claim whose targets cover the commit's paths and no
  other live claim holds them; a deletion or a non-fast-forward is refused. A push meets
  ``pre-receive``; every other ref update (``git update-ref``, ``git fetch . a:b``, a
  ``git merge`` in a worktree of the repository, libgit2 tools) meets
  ``reference-transaction`` (git >= 2.28). They ask the server at ``git config
  detente.url`` (:mod:`detente.hooks.refcheck`) and fail closed (refuse, and say so) when
  it is unreachable or silent for 5 s, unless ``detente.warn`` is set. Each update is
  checked once (:mod:`detente.hooks.checked`). ``post-receive`` then reports the landed
  commits' claims, which become ``integrated``.

Every git call a hook makes keeps the repository variables git gave it
(``GIT_INDEX_FILE``, ``GIT_DIR``, the push quarantine, ...; :mod:`detente.hooks.gitread`),
so a hook reads exactly what git is committing or receiving. ``detente hooks status``
(:mod:`detente.vcs.hook_status`) shows what is installed and whether it is current.

The installed scripts (written by :mod:`detente.vcs.hook_scripts`) run
``python -m detente.hooks <hook>`` with the interpreter that installed them; this package
imports nothing heavy at start-up. The hooks talk to detente through
:func:`detente.client.connect`, like every other adapter.
"""

from __future__ import annotations
