"""The ref store of a served repository: its stand-in when it names one, else git."""

from __future__ import annotations

from detente.errors import ValidationError
from detente.service.core import RepoConfig
from detente.vcs.refstore import GitRefStore, RefStore

__all__ = ["ref_store"]


def ref_store(repo: RepoConfig, *, needed_for: str = "integration") -> RefStore:
    """``repo.refs``, else the git repository at ``repo.path``.

    Raises:
        ValidationError: ``validation_error`` (field ``repo``) when the repository has
            neither (a path-less test repository).
    """
    if repo.refs is not None:
        return repo.refs
    if repo.path is None:
        raise ValidationError(
            f"repository {repo.name!r} has no path on this server: "
            f"{needed_for} needs its git repository",
            field="repo",
        )
    return GitRefStore(repo.path)
