"""The name a server gives this repository, remembered between hook calls.

A hook call in server mode needs the server's name for the repository of the edit, which
the server says in ``GET /v1/repos`` (matched by git common directory,
:func:`detente.client.connect.connect_server`). That answer costs the server a git
process per repository served (each head), on every edit. The harness hooks remember
the name the lookup found, per server URL, in ``<git common dir>/detente/harness/
server-names.json`` (``{url: {"name": str, "at": unix seconds}}``) for
:data:`REMEMBER_FOR` seconds; a server that no longer knows the name answers
``validation_error`` (field ``repo``) and the caller forgets it and looks it up again
(:func:`forget`). Nothing is decided here: the server's operations still judge every
request under the name.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detente.vcs.repo import RepoInfo

__all__ = ["REMEMBER_FOR", "forget", "remember", "remembered"]

#: Seconds a name found by the lookup is used without asking again.
REMEMBER_FOR = 300.0


def _file(info: RepoInfo) -> Path:
    return info.common_dir / "detente" / "harness" / "server-names.json"


def _read(info: RepoInfo) -> dict[str, Any]:
    try:
        found = json.loads(_file(info).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def remembered(url: str, info: RepoInfo) -> str | None:
    """The name the server at ``url`` gave ``info``'s repository less than
    :data:`REMEMBER_FOR` seconds ago, else None."""
    entry = _read(info).get(url.rstrip("/"))
    if not isinstance(entry, dict):
        return None
    name, at = entry.get("name"), entry.get("at")
    if not isinstance(name, str) or not name or not isinstance(at, int | float):
        return None
    return name if 0 <= time.time() - at < REMEMBER_FOR else None


def remember(url: str, info: RepoInfo, name: str) -> None:
    """Remember ``name`` for the server at ``url`` (best effort: an unwritable directory
    only means the next call asks again)."""
    _write(info, url, {"name": name, "at": time.time()})


def forget(url: str, info: RepoInfo) -> None:
    """Forget the name remembered for the server at ``url``."""
    _write(info, url, None)


def _write(info: RepoInfo, url: str, entry: dict[str, Any] | None) -> None:
    names = _read(info)
    if entry is None:
        if names.pop(url.rstrip("/"), None) is None:
            return
    else:
        names[url.rstrip("/")] = entry
    path = _file(info)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}")
        temp.write_text(json.dumps(names), encoding="utf-8")
        os.replace(temp, path)
