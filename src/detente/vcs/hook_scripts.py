"""Writing detente's git hook scripts into a repository (``detente hooks install``).

A script is a short ``sh`` file that execs ``python -m detente.hooks <hook>`` with the
interpreter that installed it (so the hook works without ``detente`` on ``PATH``; what
the hooks do is :mod:`detente.hooks`) and names the detente version that wrote it
(:mod:`detente.vcs.hook_status` compares it). An existing hook that detente did not
write is never replaced unless ``force`` says so.

The ``reference-transaction`` script returns at once, without starting Python, in the
``committed`` and ``aborted`` states (git ignores the hook's answer there); it and the
other server-side scripts start Python only when a protected ref is updated.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from detente import __version__
from detente.errors import ValidationError
from detente.vcs.git import Git

__all__ = [
    "HOOK_MARKER",
    "LOCAL_HOOKS",
    "SERVER_HOOKS",
    "VERSION_MARKER",
    "Installed",
    "hook_script",
    "hooks_dir",
    "install_local",
    "install_server",
]

#: The line that marks a hook script as detente's (reinstalling replaces only those).
HOOK_MARKER = "# detente-hook"
#: The line naming the detente version that wrote a hook script.
VERSION_MARKER = "# detente-hook-version"
#: The hooks ``detente hooks install`` writes in a claim's repository.
LOCAL_HOOKS = ("pre-commit",)
#: The hooks ``detente hooks install --bare BARE`` writes in the shared repository.
SERVER_HOOKS = ("pre-receive", "update", "reference-transaction", "post-receive")


@dataclass(frozen=True)
class Installed:
    """What was installed: the script paths and, for a server, the git config it set."""

    scripts: tuple[Path, ...]
    config: tuple[tuple[str, str], ...] = ()


# The server-side hooks start Python only for an update of a protected ref (one ``git
# config`` call decides; without configured protected refs Python decides, defaulting to
# HEAD's ref): ``reference-transaction`` runs for every ref transaction of the shared
# repository. ``exec`` keeps git the parent of the Python process, which
# :mod:`detente.hooks.checked` relies on.
_PROTECTED = "protected=$(git config --get-all detente.protectedRef)\n"
_STDIN_FILTER = (
    "updates=$(cat)\n"
    + _PROTECTED
    + """\
if [ -n "$protected" ]; then
    mine=$(printf '%s\\n' "$updates" | cut -d ' ' -f 3 | grep -xF -e "$protected")
    [ -n "$mine" ] || exit 0  # no protected ref
fi
"""
)
_ARG_FILTER = (
    _PROTECTED
    + """\
if [ -n "$protected" ]; then
    printf '%s\\n' "$protected" | grep -qxF -e "$1" || exit 0  # not a protected ref
fi
"""
)
_PREPARED_ONLY = '[ "$1" = prepared ] || exit 0  # committed/aborted: nothing to decide\n'


def hook_script(hook: str, *args: str) -> str:
    """The ``sh`` text of a hook running ``python -m detente.hooks <hook> <args>``."""
    argv = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "detente.hooks", hook, *args))
    head = (
        "#!/bin/sh\n"
        f"{HOOK_MARKER}: installed by `detente hooks install`; reinstall rather than edit.\n"
        f"{VERSION_MARKER}: {__version__}\n"
    )
    stdin = f'exec {argv} "$@" <<EOF\n$updates\nEOF\n'
    if hook == "reference-transaction":
        return f"{head}{_PREPARED_ONLY}{_STDIN_FILTER}{stdin}"
    if hook in ("pre-receive", "post-receive"):
        return f"{head}{_STDIN_FILTER}{stdin}"
    if hook == "update":
        return f'{head}{_ARG_FILTER}exec {argv} "$@"\n'
    return f'{head}exec {argv} "$@"\n'


def hooks_dir(git: Git) -> Path:
    """The repository's hooks directory (``core.hooksPath`` honoured), absolute."""
    return _hooks_dir(git)


def _hooks_dir(git: Git) -> Path:
    found = Path(git.text("rev-parse", "--git-path", "hooks"))
    return found if found.is_absolute() else (git.cwd / found).resolve()


def _check_free(path: Path, force: bool) -> None:
    if path.exists() and HOOK_MARKER not in path.read_text(errors="replace") and not force:
        raise ValidationError(
            f"{path} exists and was not written by detente; pass --force to replace it",
            field="hooks",
        )


def _write(hooks: Path, hook: str, text: str, force: bool) -> Path:
    hooks.mkdir(parents=True, exist_ok=True)
    path = hooks / hook
    _check_free(path, force)
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
    warn: bool = False,
    force: bool = False,
) -> Installed:
    """Install the server-side checks in the shared repository: ``pre-receive``,
    ``update`` and ``reference-transaction`` (see :mod:`detente.hooks.refcheck`), the
    ``post-receive`` report, and the key of detente's integration pass
    (:mod:`detente.vcs.hookpass`).

    Args:
        bare: the shared repository (bare, or a main worktree's repository).
        url: the detente server the hooks ask (``git config detente.url``).
        repo_name: the name the server knows the repository by (``detente.repo``).
        protect: protected refs (``detente.protectedRef``); default the HEAD branch.
        warn: ``detente.warn``: the hooks print refusals but refuse nothing.
        force: replace a hook detente did not write.

    Raises:
        ValidationError: not a git repository (field ``bare``), a bad ref name, or a
            foreign hook in the way (nothing is written then).
    """
    from detente.vcs.hookpass import ensure_key
    from detente.vcs.refs import check_ref_name

    git = Git(bare)
    found = git.run("rev-parse", "--git-common-dir", check=False)
    if not found.ok:
        raise ValidationError(f"{bare} is not a git repository", field="bare")
    refs = [check_ref_name(r, field="protect") for r in protect]
    if not refs:
        head = git.run("symbolic-ref", "--quiet", "HEAD", check=False).stdout.strip()
        refs = [head or "refs/heads/main"]
    hooks = _hooks_dir(git)
    for hook in SERVER_HOOKS:  # refuse before writing anything
        _check_free(hooks / hook, force)
    config = [
        ("detente.url", url),
        ("detente.repo", repo_name),
        ("detente.warn", "true" if warn else "false"),
    ]
    for key, value in config:
        git.run("config", key, value)
    git.run("config", "--unset-all", "detente.protectedRef", check=False)
    for ref in refs:
        git.run("config", "--add", "detente.protectedRef", ref)
        config.append(("detente.protectedRef", ref))
    common = Path(found.stdout.strip())
    ensure_key(common if common.is_absolute() else (git.cwd / common).resolve())
    scripts = tuple(_write(hooks, h, hook_script(h), force) for h in SERVER_HOOKS)
    return Installed(scripts, tuple(config))
