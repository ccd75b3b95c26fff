"""``detente hook-harness <harness> <event>``: one hook call, failing safe.

Reads the payload on stdin, answers on stdout/stderr with the exit code the harness
expects (:mod:`detente.harness.answers`). Whatever goes wrong is never a crash that
blocks the agent: a malformed payload is allowed and logged (stderr, and the
``detente.harness`` logger); detente unreachable (a server named by ``$DETENTE_URL``
that does not answer, a store that cannot be opened) allows and says so, unless
``detente.toml`` says ``[harness] failure = "closed"``: then it denies. A directory
detente does not coordinate (no repository, no server, no store) is allowed silently.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from detente.harness import HARNESSES
from detente.harness.answers import Answer, answer
from detente.harness.payloads import EVENTS, HookEvent, PayloadError, read_event
from detente.harness.verdicts import Verdict

if TYPE_CHECKING:
    from detente.harness.context import HookContext

__all__ = ["main", "run"]


def _warn(message: str, *args: object) -> None:
    """A warning on the ``detente.harness`` logger (imported only when there is one: a
    hook call that goes well never loads :mod:`logging`)."""
    import logging

    logging.getLogger("detente.harness").warning(message, *args)


USAGE = f"usage: detente hook-harness {{{'|'.join(HARNESSES)}}} {{{'|'.join(EVENTS)}}}"


def _top(start: Path) -> Path | None:
    """The worktree top above ``start`` (the first directory holding ``.git``), no git."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _where(named: Path, cwd: Path) -> Path | None:
    """The worktree top of the payload's directory, else of the hook's; None when neither
    can be read (a name too long, a directory it may not enter)."""
    for start in (named, cwd):
        try:
            if start.exists():
                return _top(start)
        except (OSError, ValueError):
            continue
    return None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _fails_closed(top: Path | None) -> bool:
    if top is None:
        return False
    try:
        from detente.harness.context import policy

        return policy(top).get("failure") == "closed"
    except Exception:  # an invalid detente.toml: the default (open)
        return False


def run(harness: str, event: str, text: str, *, cwd: Path) -> Answer:
    """One hook call: ``(exit code, stdout, stderr)``. Never raises."""
    try:
        payload = json.loads(text) if text.strip() else None
        hook = read_event(harness, event, payload, cwd=cwd)
    except (ValueError, PayloadError, RecursionError) as exc:  # nested too deep: malformed
        _warn("detente hook-harness %s %s: malformed payload: %s", harness, event, exc)
        allowed = answer(harness, event, Verdict("allow"))
        return allowed[0], allowed[1], f"detente: malformed {harness} payload ({exc}); allowed\n"
    top = _where(hook.cwd, cwd)
    try:
        verdict = _decide(hook, top)
    except Exception as exc:  # fail safe: never block the agent by crashing
        from detente.errors import DetenteError

        said = f"{exc.code}: {exc.detail}" if isinstance(exc, DetenteError) else repr(exc)
        _warn("detente hook-harness %s %s: %s", harness, event, said)
        # A name no file system takes (too long, say) is the payload's fault: allowed and
        # logged like any malformed payload, never refused for want of detente.
        if isinstance(exc, DetenteError):
            refused_input = exc.code == "validation_error"
        else:
            refused_input = _bad_name(exc)
        if hook.kind in ("edit", "shell") and not refused_input and _fails_closed(top):
            verdict = Verdict(
                "deny",
                f"detente cannot check this ({said}) and this repository fails closed "
                '([harness] failure = "closed"): start the server or retry.',
            )
        else:
            gone = isinstance(exc, DetenteError) and exc.code.endswith("_unavailable")
            why = "detente unreachable" if gone else "detente could not check this"
            verdict = Verdict("allow", notice=f"{why} ({said}): allowed unchecked")
    return answer(harness, event, verdict)


def _bad_name(exc: BaseException) -> bool:
    """Whether ``exc`` says a name in the payload cannot name a file: too long for the
    file system, or holding a NUL (``ValueError: embedded null byte``). Any other error
    is detente's, and a repository that fails closed refuses on it."""
    import errno

    if isinstance(exc, OSError):
        return exc.errno == errno.ENAMETOOLONG
    return isinstance(exc, ValueError) and "null" in str(exc)


def _decide(hook: HookEvent, top: Path | None) -> Verdict:
    from detente.harness.context import NotCoordinated, open_context
    from detente.harness.gate import own_files_refusal, touched_files

    if hook.kind == "other" or top is None:
        return Verdict("allow")
    files: list[str] = []
    if hook.kind in ("edit", "shell"):
        files = touched_files(hook, top)
        refusal = own_files_refusal(files)
        if refusal is not None:
            return refusal
        if hook.kind == "shell":
            from detente.harness.shell_paths import shell_writes

            writes = shell_writes(hook.command or "")
            if writes.unread:
                _warn("detente hook-harness %s: %s; allowed", hook.harness, writes.unread)
                return Verdict(
                    "allow",
                    notice=f"detente: {writes.unread}: allowed unchecked (the git hooks still "
                    "judge what it commits)",
                )
            if writes.empty:
                return Verdict("allow")  # nothing it writes can be read: the git hooks judge
        elif not files:
            return Verdict("allow")  # outside this repository
    from detente.errors import ValidationError

    where = hook.cwd if _exists(hook.cwd) else top
    try:
        ctx = open_context(where)
    except NotCoordinated:
        return Verdict("allow")
    try:
        return _on(ctx, hook, files)
    except ValidationError as exc:
        if exc.field != "repo" or not ctx.remembered:
            raise
        # The server no longer serves the repository under the name remembered (it was
        # restarted, or renamed it): a request naming an unknown repository changed
        # nothing. Forget the name, ask the server, and judge again.
        from detente.harness.server_names import forget

        forget(ctx.client.url, ctx.info)
    finally:
        ctx.close()
    try:
        ctx = open_context(where, remembered=False)
    except NotCoordinated:
        return Verdict("allow")
    try:
        return _on(ctx, hook, files)
    finally:
        ctx.close()


def _on(ctx: HookContext, hook: HookEvent, files: list[str]) -> Verdict:
    """The session hooks and the gate, on an open context."""
    from detente.harness import sessions
    from detente.harness.gate import gate

    if hook.kind == "start":
        return sessions.start(ctx, hook)
    if hook.kind == "stop":
        return sessions.stop(ctx, hook)
    if hook.kind == "end":
        return sessions.end(ctx, hook)
    sessions.heartbeat(ctx, hook)
    return gate(ctx, hook, files)


def main(argv: Sequence[str], stdin: TextIO | None = None) -> int:
    """Console entry (``detente hook-harness HARNESS EVENT``): print the answer, return the
    exit code (1, a non-blocking error, with a usage line for unknown arguments)."""
    if len(argv) != 2 or argv[0] not in HARNESSES or argv[1] not in EVENTS:
        sys.stderr.write(USAGE + "\n")
        return 1  # a non-blocking error in every harness (2 would block the tool)
    try:
        text = (stdin or sys.stdin).read()
    except (OSError, UnicodeDecodeError):
        text = ""
    try:
        here = Path.cwd()
    except OSError:  # the directory was removed under the hook
        here = Path("/")
    code, out, err = run(argv[0], argv[1], text, cwd=here)
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.stdout.flush()
    return code
