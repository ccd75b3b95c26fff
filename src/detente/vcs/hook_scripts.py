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
    "ADVISORY_LOCAL_HOOKS",
    "HOOK_MARKER",
    "LOCAL_HOOKS",
    "SERVER_HOOKS",
    "VERSION_MARKER",
    "HooksPath",
    "Installed",
    "hook_script",
    "hooks_dir",
    "hooks_path",
    "install_local",
    "install_server",
]

#: The line that marks a hook script as detente's (reinstalling replaces only those).
HOOK_MARKER = "# detente-hook"
#: The line naming the detente version that wrote a hook script.
VERSION_MARKER = "# detente-hook-version"
#: The hooks ``detente hooks install`` writes in a claim's repository (``hooks status``
#: checks them).
LOCAL_HOOKS = ("pre-commit",)
#: Written beside them when the place is free (a hook detente did not write is left
#: alone, unless ``force``): the ``post-commit`` merge check, advice that never refuses.
ADVISORY_LOCAL_HOOKS = ("post-commit",)
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


@dataclass(frozen=True)
class HooksPath:
    """Where git looks for the repository's hooks, and whether that is the repository's own.

    Attributes:
        path: the hooks directory (absolute).
        inside: it lies in the repository: under the common git directory or the working
            tree's top level (husky's ``.husky/_``). False for a directory shared by other
            repositories (``git config --global core.hooksPath ~/.githooks``).
        origin: where ``core.hooksPath`` is set (``file:/home/you/.gitconfig``), None when unset.
        own: the repository's own hooks directory, ``<common git dir>/hooks``.
    """

    path: Path
    inside: bool
    origin: str | None
    own: Path

    def refusal(self, install: str) -> ValidationError:
        """The error of an install that would write into a shared directory.

        Args:
            install: the install command, to name its ``--repo-hooks`` spelling.
        """
        where = f" (set in {self.origin})" if self.origin else ""
        scope = self.origin or ""
        unset = (
            "git config --global --unset core.hooksPath"
            if scope.endswith(".gitconfig") or "/.config/git/" in scope
            else "git config --unset core.hooksPath"
        )
        return ValidationError(
            f"core.hooksPath points outside this repository, at {self.path}{where}: detente's "
            "hooks there would run in every repository that uses it. Nothing was written. "
            f"Install into this repository's own hooks directory with `{install} "
            f"--repo-hooks` (it sets core.hooksPath to {self.own} in this repository's "
            f"config, so the hooks in {self.path} no longer run here), or `{unset}` and "
            "install again",
            field="hooksPath",
            hooksPath=str(self.path),
            origin=self.origin,
        )


def hooks_path(git: Git) -> HooksPath:
    """Where ``git`` (a repository's) hooks run from, and whether that is its own.

    Raises:
        VcsError: ``vcs_error`` when ``git.cwd`` is not in a git repository.
    """
    found = _hooks_dir(git)
    common = Path(git.text("rev-parse", "--git-common-dir"))
    common = (common if common.is_absolute() else git.cwd / common).resolve()
    roots = [common]
    top = git.run("rev-parse", "--show-toplevel", check=False)
    if top.ok and top.stdout.strip():
        roots.append(Path(top.stdout.strip()).resolve())
    inside = any(found == r or found.is_relative_to(r) for r in roots)
    origin = None
    shown = git.run("config", "--show-origin", "--get", "core.hooksPath", check=False)
    if shown.ok and shown.stdout.strip():
        origin = shown.stdout.split("\t", 1)[0]
    return HooksPath(found, inside, origin, common / "hooks")


def _target(
    git: Git, *, repo_hooks: bool, install: str
) -> tuple[Path, tuple[tuple[str, str], ...]]:
    """The directory to write into and the git configuration that takes (nothing written).

    Raises:
        ValidationError: ``core.hooksPath`` is outside the repository and not ``repo_hooks``.
    """
    where = hooks_path(git)
    if where.inside:
        return where.path, ()
    if not repo_hooks:
        raise where.refusal(install)
    return where.own, (("core.hooksPath", str(where.own)),)


def _check_free(path: Path, force: bool) -> None:
    if path.exists() and HOOK_MARKER not in path.read_text(errors="replace") and not force:
        raise ValidationError(
            f"{path} exists and was not written by detente; pass --force to replace it",
            field="hooks",
        )


def _free(path: Path) -> bool:
    """No hook at ``path``, or one detente wrote."""
    try:
        return not path.exists() or HOOK_MARKER in path.read_text(errors="replace")
    except OSError:
        return False


def _write(hooks: Path, hook: str, text: str, force: bool) -> Path:
    hooks.mkdir(parents=True, exist_ok=True)
    path = hooks / hook
    _check_free(path, force)
    path.write_text(text)
    path.chmod(0o755)
    return path


def install_local(
    worktree: Path, *, warn: bool = False, force: bool = False, repo_hooks: bool = False
) -> Installed:
    """Install the ``pre-commit`` guard for the repository of ``worktree`` (every worktree
    of a repository shares its hooks directory), and the ``post-commit`` merge check
    (:mod:`detente.hooks.post_commit`) unless a hook detente did not write is there.

    Args:
        worktree: a directory in the repository.
        warn: the guard only prints what it would refuse.
        force: replace a ``pre-commit`` hook detente did not write.
        repo_hooks: when ``core.hooksPath`` points outside the repository, install into
            ``<common git dir>/hooks`` and set ``core.hooksPath`` there in the repository's
            own config (returned in :attr:`Installed.config`).

    Raises:
        ValidationError: ``core.hooksPath`` points outside the repository (and not
            ``repo_hooks``; field ``hooksPath``), or a foreign hook is in the way (and not
            ``force``); nothing is written then.
        VcsError: ``worktree`` is not in a git repository.
    """
    git = Git(worktree)
    hooks, config = _target(git, repo_hooks=repo_hooks, install="detente hooks install")
    _check_free(hooks / "pre-commit", force)
    for key, value in config:
        git.run("config", "--local", key, value)
    text = hook_script("pre-commit", *(["--warn"] if warn else []))
    scripts = [_write(hooks, "pre-commit", text, force)]
    for hook in ADVISORY_LOCAL_HOOKS:
        if force or _free(hooks / hook):
            scripts.append(_write(hooks, hook, hook_script(hook), force))
    return Installed(tuple(scripts), config)


def install_server(
    bare: Path,
    *,
    url: str,
    repo_name: str,
    protect: Sequence[str] = (),
    warn: bool = False,
    force: bool = False,
    repo_hooks: bool = False,
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
        repo_hooks: see :func:`install_local`.

    Raises:
        ValidationError: not a git repository (field ``bare``), a bad ref name,
            ``core.hooksPath`` outside the repository (field ``hooksPath``, unless
            ``repo_hooks``), or a foreign hook in the way (nothing is written then).
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
    hooks, moved = _target(git, repo_hooks=repo_hooks, install="detente hooks install --bare")
    for hook in SERVER_HOOKS:  # refuse before writing anything
        _check_free(hooks / hook, force)
    config = [
        *moved,
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
