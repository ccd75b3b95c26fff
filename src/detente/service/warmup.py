"""Warming a long-lived process before it takes requests: the first command after a start
costs what every later one does.

A command imports what it needs on first use (the per-aggregate services, the deciding
modules, the holders' similarity index, the memory parser), so that a short-lived CLI call
that only reads never pays for writes. A server pays each of those imports inside the
first request that needs them: measured on a 2-core machine, the first claim opening after
a start took 330-750 ms (the openings after it 5-20 ms), most of it importing
:mod:`detente.service.similar_holders` (then with numpy, about 160 ms on an idle machine), the
claim decision and the meeting reactions; the first section patch and the first
completion paid their own. In ``tests/storage/test_storage_faults.py`` every server lives
for a handful of acknowledgements, so under a renew + patch load the one opening a round
makes was always such a first one (issue #14: "a claim open stalls ~0.5 s under
contention").

:func:`warm` does that work once, before a server listens (the HTTP app's lifespan calls
it): it builds every per-aggregate service, imports :data:`WRITE_PATH`, loads each
repository's projection from its snapshot and confirms the default branch's tip as a
commit (starting the commit check's ``git cat-file`` process,
:mod:`detente.vcs.commit_batch`). ``tests/api/test_api_warmup.py`` checks that
the first opening, renewal, section patch and completion after it import nothing more.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from typing import TYPE_CHECKING

from detente.errors import DetenteError

if TYPE_CHECKING:
    from detente.service import Service

__all__ = ["SERVICES", "WRITE_PATH", "WRITE_PATH_EXTRAS", "warm"]

#: The per-aggregate services of :class:`~detente.service.Service` (built on first use).
SERVICES: tuple[str, ...] = (
    "claims",
    "takeover",
    "meetings",
    "agents",
    "memory",
    "gates",
    "patches",
    "deployments",
    "reconcile",
    "search",
)

#: Modules the write commands import inside a function on first use (decisions, reactions,
#: the holders' similarity index, the ref store of completions, the markdown parser).
WRITE_PATH: tuple[str, ...] = (
    "detente.domain.claims.decide",
    "detente.domain.claims.objective",
    "detente.domain.claims.opening",
    "detente.domain.meetings.decide",
    "detente.domain.meetings.reactions",
    "detente.domain.memory.decide",
    # the families a state loads with their first record (detente.domain.state)
    "detente.domain.meetings.evolve",
    "detente.domain.memory.evolve",
    "detente.domain.gates.evolve",
    "detente.domain.resources.evolve",
    "detente.domain.checks.model",
    "detente.domain.memory.patching",
    "detente.domain.memory.writes",
    "detente.domain.settle",
    "detente.domain.write_check",
    "detente.security.identity",
    "detente.service.similar_holders",
    "detente.service.placement",
    "detente.index.diff",  # a claim's work (detente.service.claim_work, on first use)
    "detente.service.repo_refs",
    "detente.vcs.changes",
    "detente.vcs.checkout",
    "detente.vcs.hookpass",
    "detente.vcs.memory_merge",  # a completion over memory commits
    # a memory commit's objects (detente.vcs.objects, on the first memory write)
    "dulwich.config",
    "dulwich.file",
    "dulwich.objects",
    "dulwich.repo",
    "dulwich.trailers",
    "dulwich.worktree",
    "detente.vcs.worktrees",
    "markdown_it",  # the memory documents' parser (detente.domain.memory.markdown)
    # the lexical mode's stemmer (detente.index.lexical, on first stem): English alone
    "detente.index.english_stem",
    "_detente_snowball_english.english_stemmer",
)

#: Write-path modules that need an extra (the semantic index's numpy rows): imported when
#: the extra is installed, skipped without it (a default install runs the lexical mode).
WRITE_PATH_EXTRAS: tuple[str, ...] = ("detente.index.nearest_vectors",)


def warm(service: Service) -> None:
    """Import the write path and load every repository's projection (see the module
    docstring). Takes each repository's lock only while loading its projection.

    A projection that cannot be loaded now (the store is down, its file unreadable) is
    logged (``detente.storage``, with the error) and left to the first command, which
    answers as it would have without a warm-up: a warm-up never stops a server from
    starting.
    """
    for name in SERVICES:
        getattr(service, name)
    for module in WRITE_PATH:
        importlib.import_module(module)
    for module in WRITE_PATH_EXTRAS:
        with contextlib.suppress(ImportError):  # no extra: its mode never runs
            importlib.import_module(module)
    for repo in service.names():
        try:
            with service.lock(repo):
                service.current_state(repo)
        except Exception as exc:  # best effort: the first command reports it again
            logging.getLogger("detente.storage").warning(
                "warm-up could not load the projection of %s: %s", repo, exc, exc_info=True
            )
        _known_tip(service, repo)


def _known_tip(service: Service, repo: str) -> None:
    """Confirm the default branch's tip as a commit: the commit check's process starts now
    and the first opening naming that tip asks no git (nothing when the branch is unborn
    or git fails: the opening resolves its base as it would have)."""
    config = service.repo(repo)
    if config.path is None or config.refs is not None:
        return
    try:
        tip = service.base_commit(config, config.default_branch)
        service.base_commit(config, tip)
    except DetenteError:
        return
