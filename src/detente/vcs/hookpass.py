"""The pass detente's own integration shows the server-side hooks.

An integration (``POST /v1/claims/{id}/complete``) checks the claim and moves the
protected ref with ``git update-ref`` while it holds the repository's command lock. The
shared repository's ``reference-transaction`` hook sees that update like any other; asking
the server again would cost a second round trip and wait for the very lock the
integration holds. So the integration passes the hook a pass in ``$DETENTE_INTEGRATION``:
``<ref> <old> <new> <mac>``, the mac an HMAC-SHA256 (RFC 2104) of exactly that update
under a key kept in the repository (``<git common dir>/detente/hook.key``, mode 0600,
written by ``detente hooks install --bare``). The hook lets through exactly that
update and nothing else; without the key nobody can mint a pass, and a copied pass
authorizes nothing but the update the server already checked.

The key is not a defence against someone who can read the repository's files (they can
remove the hooks as well); it keeps a documented environment variable from becoming a way
around the check.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

__all__ = ["PASS_ENV", "ensure_key", "key_path", "mac", "pass_env", "read_key", "valid_pass"]

#: The environment variable carrying the pass.
PASS_ENV = "DETENTE_INTEGRATION"
_KEY = Path("detente") / "hook.key"


def key_path(common_dir: Path) -> Path:
    """Where the key of the repository with this common git directory lives."""
    return common_dir / _KEY


def ensure_key(common_dir: Path) -> Path:
    """Create the repository's key (32 random bytes, hex, mode 0600) unless it exists.

    Returns:
        The key file's path.
    """
    path = key_path(common_dir)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32) + "\n")
    return path


def read_key(common_dir: Path) -> bytes | None:
    """The repository's key, or None when no server-side hook was installed."""
    try:
        text = key_path(common_dir).read_text().strip()
    except OSError:
        return None
    return text.encode() if text else None


def mac(key: bytes, ref: str, old: str, new: str) -> str:
    """HMAC-SHA256 (hex) of one ref update ``old -> new`` of ``ref``."""
    return hmac.new(key, f"{ref}\0{old}\0{new}".encode(), hashlib.sha256).hexdigest()


def pass_env(repo: Path, ref: str, old: str, new: str) -> dict[str, str]:
    """The environment that lets this one update through the repository's hooks.

    Args:
        repo: the repository's directory (a bare repository or a main worktree; a linked
            worktree is located through git).
        ref, old, new: the update.

    Returns:
        ``{PASS_ENV: pass}``, or ``{}`` when the repository has no key (no hooks to pass).
    """
    from detente.errors import VcsError

    try:
        key = read_key(_common_dir(repo))
    except VcsError:  # not a repository: update-ref itself will say so
        return {}
    return {PASS_ENV: f"{ref} {old} {new} {mac(key, ref, old, new)}"} if key else {}


def valid_pass(value: str | None, key: bytes | None, ref: str, old: str, new: str) -> bool:
    """True when ``value`` is the pass for exactly this update under ``key``."""
    if not value or not key:
        return False
    parts = value.split()
    if len(parts) != 4 or parts[:3] != [ref, old, new]:
        return False
    return hmac.compare_digest(parts[3], mac(key, ref, old, new))


def _common_dir(repo: Path) -> Path:
    dot_git = repo / ".git"
    if dot_git.is_dir():
        return dot_git
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir():
        return repo
    from detente.vcs.git import Git

    found = Path(Git(repo).text("rev-parse", "--git-common-dir"))
    return found if found.is_absolute() else (repo / found).resolve()
