"""Writing detente's git hook scripts into a repository (``detente hooks install``).

A script is a two-line ``sh`` file that execs ``python -m detente.hooks <hook>`` with the
interpreter that installed it (so the hook works without ``detente`` on ``PATH``; what
the hooks do is :mod:`detente.hooks`). An existing hook that detente did not write is
never replaced unless ``force`` says so.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from detente.errors import ValidationError
from detente.vcs.git import Git

__all__ = ["HOOK_MARKER", "Installed", "hook_script", "install_local", "install_server"]

#: The line that marks a hook script as detente's (reinstalling replaces only those).
HOOK_MARKER = "# detente-hook"


@dataclass(frozen=True)
class Installed:
    """What was installed: the script paths and, for a server, the git config it set."""

    scripts: tuple[Path, ...]
    config: tuple[tuple[str, str], ...] = ()


def hook_script(hook: str, *args: str) -> str:
    """The ``sh`` text of a hook running ``python -m detente.hooks <hook> <args>``."""
    argv = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "detente.hooks", hook, *args))
    return (
        "#!/bin/sh\n"
        f"{HOOK_MARKER}: installed by `detente hooks install`; reinstall rather than edit.\n"
        f'exec {argv} "$@"\n'
    )


def _hooks_dir(git: Git) -> Path:
    found = Path(git.text("rev-parse", "--git-path", "hooks"))
    return found if found.is_absolute() else (git.cwd / found).resolve()


def _write(hooks: Path, hook: str, text: str, force: bool) -> Path:
    hooks.mkdir(parents=True, exist_ok=True)
    path = hooks / hook
    if path.exists() and HOOK_MARKER not in path.read_text(errors="replace") and not force:
        raise ValidationError(
            f"{path} exists and was not written by detente; pass --force to replace it",
            field="hooks",
        )
    path.write_text(text)
    path.chmod(0o755)
    return path


def install_local(worktree: Path, *, warn: bool = False, force: bool = False) -> Installed:
    """Install the ``pre-commit`` guard for the repository of ``worktree`` (every worktree
    of a repository shares its hooks directory).

    Raises:
        ValidationError: a foreign hook is in the way (and not ``force``).
        VcsError: ``worktree`` is not in a git repository.
    """
    hooks = _hooks_dir(Git(worktree))
    text = hook_script("pre-commit", *(["--warn"] if warn else []))
    return Installed((_write(hooks, "pre-commit", text, force),))


def install_server(
    bare: Path,
    *,
    url: str,
    repo_name: str,
    protect: Sequence[str] = (),
    force: bool = False,
) -> Installed:
    """Install the ``pre-receive`` check (and the ``post-receive`` report) in a (bare)
    shared repository.

    Args:
        bare: the repository pushes go to.
        url: the detente server the hook asks (``git config detente.url``).
        repo_name: the name the server knows the repository by (``detente.repo``).
        protect: protected refs (``detente.protectedRef``); default the HEAD branch.
        force: replace a hook detente did not write.

    Raises:
        ValidationError: not a git repository, a bad ref name, or a foreign hook.
    """
    from detente.vcs.refs import check_ref_name

    git = Git(bare)
    if not git.run("rev-parse", "--git-dir", check=False).ok:
        raise ValidationError(f"{bare} is not a git repository", field="server")
    refs = [check_ref_name(r, field="protect") for r in protect]
    if not refs:
        head = git.run("symbolic-ref", "--quiet", "HEAD", check=False).stdout.strip()
        refs = [head or "refs/heads/main"]
    config = [("detente.url", url), ("detente.repo", repo_name)]
    for key, value in config:
        git.run("config", key, value)
    git.run("config", "--unset-all", "detente.protectedRef", check=False)
    for ref in refs:
        git.run("config", "--add", "detente.protectedRef", ref)
        config.append(("detente.protectedRef", ref))
    hooks = _hooks_dir(git)
    scripts = tuple(
        _write(hooks, h, hook_script(h), force) for h in ("pre-receive", "post-receive")
    )
    return Installed(scripts, tuple(config))
