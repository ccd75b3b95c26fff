"""The one subprocess wrapper around the ``git`` command-line tool.

Every git invocation in detente goes through :class:`Git`, so that the environment is
normalised in one place and every failure is translated into :class:`GitError` (a
:class:`~detente.errors.VcsError`, code ``vcs_error``): callers never see a raw
``subprocess.CalledProcessError`` or ``FileNotFoundError``.

The environment git runs with:

- ``-c core.quotepath=false``: paths with non-ASCII bytes are printed verbatim, not
  C-quoted (``-z`` output is never quoted anyway);
- ``GIT_TERMINAL_PROMPT=0``: git never blocks on a credential prompt; stdin is closed
  unless ``input`` is given;
- ``LC_ALL=C``: messages are stable English, so callers may match on them;
- the repository-local variables git itself drops when it switches repositories
  (:data:`REPO_LOCAL_ENV`: ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``,
  ``GIT_OBJECT_DIRECTORY``, ``GIT_QUARANTINE_PATH``, ...) are never inherited: a detente
  process started from a git hook, or from a shell with ``GIT_DIR`` exported, would
  otherwise operate on the wrong repository. A caller that really wants them passes them
  back: ``Git(cwd, keep_env=...)`` for every call (a git hook reading exactly what git is
  committing or receiving, see :mod:`detente.hooks.gitread`), or ``env`` for one call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from detente.errors import VcsError

__all__ = ["REPO_LOCAL_ENV", "Git", "GitError", "GitResult"]

#: Repository-local variables that must not leak from the caller's environment: git's own
#: ``local_repo_env`` list (``git rev-parse --local-env-vars``) without the ``-c``
#: configuration variables, plus the ``pre-receive`` quarantine (``GIT_QUARANTINE_PATH``).
REPO_LOCAL_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
)

# Options that take a separate value before the subcommand (``git -C dir status``).
_GLOBAL_OPTS_WITH_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})


class GitError(VcsError):
    """A git command failed (code ``vcs_error``).

    Attributes:
        returncode: git's exit status (127 when the ``git`` executable was not found,
            -1 when it could not be started or timed out).
        stderr: git's complete standard error, decoded.
        git_args: the arguments given to git (without the executable and ``-c``
            defaults).
    """

    def __init__(
        self, detail: str, *, returncode: int, stderr: str, args: tuple[str, ...] = ()
    ) -> None:
        super().__init__(detail, exitCode=returncode, gitCommand=_subcommand(args) or None)
        self.returncode = returncode
        self.stderr = stderr
        self.git_args = args


class GitResult(NamedTuple):
    """The outcome of one git invocation.

    Attributes:
        args: the arguments given to git (without the executable and ``-c`` defaults).
        returncode: git's exit status.
        stdout: standard output decoded as UTF-8 (undecodable bytes kept as surrogate
            escapes, so ``os.fsencode`` restores the exact path bytes).
        stderr: standard error decoded as UTF-8 (undecodable bytes replaced).
        stdout_bytes: the raw standard output.
    """

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    stdout_bytes: bytes

    @property
    def ok(self) -> bool:
        """True when git exited with status 0."""
        return self.returncode == 0

    def error(self) -> GitError:
        """Build the :class:`GitError` describing this (failed) result.

        Returns:
            A ``GitError`` whose detail names the git subcommand, the exit status and the
            first meaningful line of stderr.
        """
        sub = _subcommand(self.args) or "(no subcommand)"
        line = _first_message_line(self.stderr)
        detail = f"git {sub} failed with exit status {self.returncode}"
        if line:
            detail += f": {line}"
        return GitError(detail, returncode=self.returncode, stderr=self.stderr, args=self.args)

    def check_returncode(self) -> GitResult:
        """Return ``self`` if git succeeded.

        Returns:
            This result, unchanged.

        Raises:
            GitError: ``vcs_error`` when ``returncode`` is not 0.
        """
        if self.returncode != 0:
            raise self.error()
        return self


class Git:
    """Runs ``git`` in one working directory.

    Args:
        cwd: the directory git runs in (a worktree, a subdirectory of one, or any
            directory for commands that need no repository).
        keep_env: variables every call sets after the scrubbing (e.g. the
            ``GIT_INDEX_FILE`` git gave a hook); ``env`` of one call still wins.
    """

    def __init__(self, cwd: Path, *, keep_env: Mapping[str, str] | None = None) -> None:
        self.cwd = Path(cwd)
        self.keep_env = dict(keep_env or {})

    def __repr__(self) -> str:
        return f"Git({str(self.cwd)!r})"

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> GitResult:
        """Run ``git <args>`` and capture its output.

        Args:
            *args: git arguments, e.g. ``("rev-parse", "--verify", "HEAD")``.
            input: bytes fed to git's stdin; when None stdin is closed (``/dev/null``).
            check: raise on a non-zero exit status (default); when False the caller
                inspects ``GitResult.returncode``.
            env: extra environment variables, applied after the scrubbing described in
                the module docstring (so they may set ``GIT_DIR`` deliberately).
            timeout: seconds before git is killed; None waits indefinitely.

        Returns:
            The :class:`GitResult`.

        Raises:
            GitError: ``vcs_error`` when git exits non-zero and ``check`` is True, when the
                ``git`` executable is missing (``returncode`` 127), when ``cwd`` does not
                exist, or on timeout.
        """
        import subprocess  # here: a hook that reads git's files only never loads it

        argv = ["git", "-c", "core.quotepath=false", *args]
        try:
            proc = subprocess.run(
                argv,
                cwd=self.cwd,
                input=input,
                stdin=subprocess.DEVNULL if input is None else None,
                capture_output=True,
                env=self._environment(env),
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError as exc:
            raise self._start_failure(exc, args) from None
        except NotADirectoryError:
            raise GitError(
                f"cannot run git in {self.cwd}: not a directory",
                returncode=-1,
                stderr="",
                args=args,
            ) from None
        except subprocess.TimeoutExpired:
            raise GitError(
                f"git {_subcommand(args)} timed out after {timeout} seconds in {self.cwd}",
                returncode=-1,
                stderr="",
                args=args,
            ) from None
        except OSError as exc:
            raise GitError(
                f"cannot start git in {self.cwd}: {exc.strerror or exc}",
                returncode=-1,
                stderr="",
                args=args,
            ) from None
        result = GitResult(
            args=tuple(args),
            returncode=proc.returncode,
            stdout=proc.stdout.decode("utf-8", "surrogateescape"),
            stderr=proc.stderr.decode("utf-8", "replace"),
            stdout_bytes=proc.stdout,
        )
        if check:
            result.check_returncode()
        return result

    def text(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        """Run ``git <args>`` and return its stdout without trailing newlines.

        Only trailing newlines are removed (not other whitespace), so a path that ends in
        a space survives.

        Args:
            *args: git arguments.
            input: bytes fed to git's stdin (see :meth:`run`).
            env: extra environment variables (see :meth:`run`).

        Returns:
            The decoded standard output, trailing ``\\n`` removed.

        Raises:
            GitError: ``vcs_error`` when git fails (see :meth:`run`).
        """
        return self.run(*args, input=input, env=env).stdout.rstrip("\n")

    def environment(self) -> dict[str, str]:
        """The environment every call runs git with (see the module docstring): for a
        git process the caller starts and talks to itself (a ``--batch`` process)."""
        return self._environment(None)

    def _environment(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in REPO_LOCAL_ENV}
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"
        env.update(self.keep_env)
        if extra:
            env.update(extra)
        return env

    def _start_failure(self, exc: FileNotFoundError, args: tuple[str, ...]) -> GitError:
        # subprocess reports a missing cwd and a missing executable the same way; the
        # exception's filename tells which one it was.
        if exc.filename is not None and os.fspath(exc.filename) == os.fspath(self.cwd):
            return GitError(
                f"cannot run git in {self.cwd}: the directory does not exist",
                returncode=-1,
                stderr="",
                args=args,
            )
        import shutil  # on failure only: it loads the compression modules

        if shutil.which("git") is None or exc.filename == "git":
            return GitError(
                "the git executable was not found on PATH; install git to use detente",
                returncode=127,
                stderr="",
                args=args,
            )
        return GitError(
            f"cannot start git in {self.cwd}: {exc.strerror or exc}",
            returncode=-1,
            stderr="",
            args=args,
        )


def _subcommand(args: tuple[str, ...]) -> str:
    """The git subcommand in ``args`` (skipping global options), or ``""``."""
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg in _GLOBAL_OPTS_WITH_VALUE:
            skip_next = True
            continue
        if arg.startswith("-"):
            continue
        return arg
    return ""


def _first_message_line(stderr: str) -> str:
    """The first ``fatal:``/``error:`` line of stderr, else its first non-empty line.

    git often prints progress ("Preparing worktree ...") before the real reason.
    """
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[0] if lines else ""
