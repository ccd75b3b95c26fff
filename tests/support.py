"""Helpers shared by tests (importable as ``support``; pytest adds tests/ to sys.path)."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from detente.domain.claims.commands import OpenClaim
from detente.domain.claims.model import Agent

BASE = "a" * 40


def counting_ids() -> Callable[[str], str]:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter):06d}"


def seed(
    *paths: str, agent: str = "alice", ttl: int = 60, repo: str = "demo", **kw: object
) -> OpenClaim:
    """A claim command on ``paths`` by ``agent``."""
    return OpenClaim(
        repo=repo,
        objective=kw.pop("objective", f"{agent} works on {', '.join(paths)}"),  # type: ignore[arg-type]
        base_commit=BASE,
        agent=Agent(id=agent, name=agent),
        lease_ttl_seconds=ttl,
        paths=tuple(paths),
        **kw,  # type: ignore[arg-type]
    )


def claim_body(
    *paths: str, agent: str = "alice", ttl: int = 60, **extra: object
) -> dict[str, object]:
    body: dict[str, object] = {
        "repo": "demo",
        "objective": f"{agent} edits {', '.join(paths)}",
        "baseCommit": "a" * 40,
        "paths": list(paths),
        "leaseTtlSeconds": ttl,
        "agent": {"id": agent, "name": agent},
    }
    body.update(extra)
    return body


def wait_until(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass; True if it held.

    For waiting on a real process or server (never a substitute for the fake clock).
    """
    import threading
    import time

    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while time.monotonic() < deadline:
        if predicate():
            return True
        pause.wait(interval)
    return predicate()


def isolate_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user/system git config, no parent repositories, no ``GIT_*``/``DETENTE_*`` settings
    inherited from the shell (subprocesses see the same environment)."""
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    for key in list(os.environ):
        if key.startswith(("GIT_", "DETENTE_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))


def repo_paths(name: str = "ansible-paths.txt") -> list[str]:
    """Real repository paths from ``shared/data/<name>`` beside the checkout (the main one
    or any worktree of it); where the data is absent (a bare CI clone), a deterministic
    synthetic tree of 4,000 paths shaped like it (nested directories, mixed extensions).
    """
    import random
    from pathlib import Path

    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / name
        if candidate.is_file():
            return [p for p in candidate.read_text(encoding="utf-8").splitlines() if p]
    rng = random.Random(20261130)
    tops = ["lib", "test", "docs", "hacking", "changelogs", "packaging"]
    words = [
        "ansible",
        "plugins",
        "modules",
        "units",
        "integration",
        "targets",
        "cli",
        "utils",
        "module_utils",
        "executor",
        "inventory",
        "vars",
        "docsite",
        "rst",
        "files",
        "tasks",
    ]
    exts = ["py", "py", "py", "yml", "yml", "md", "rst", "txt", "json", "j2", "sh", "ps1"]
    out: set[str] = set()
    while len(out) < 4000:
        depth = rng.randint(0, 4)
        parts = [rng.choice(tops), *(rng.choice(words) for _ in range(depth))]
        out.add("/".join(parts) + f"/{rng.choice(words)}_{rng.randint(0, 40)}.{rng.choice(exts)}")
    return sorted(out)


@contextlib.contextmanager
def log_records(name: str, level: int = logging.INFO) -> Iterator[list[logging.LogRecord]]:
    """The records logger ``name`` emits at ``level`` or above inside the block, read through
    a handler of its own: ``caplog`` listens at the root and misses them once an in-process
    server has turned propagation off (``detente.logs.configure``)."""
    seen: list[logging.LogRecord] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    logger, handler = logging.getLogger(name), _Collect(level)
    was = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > level:
        logger.setLevel(level)
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(was)


#: A value for each pattern the API's schemas declare (a file's SHA-256).
_PATTERN_EXAMPLES = {"^[0-9a-f]{64}$": "0" * 64}


def minimal_instance(schema: dict[str, Any], components: dict[str, Any]) -> Any:
    """The smallest instance of a JSON schema (an OpenAPI request body): its required
    fields with plain values; a tagged union (``oneOf``) takes its first kind."""
    if "$ref" in schema:
        return minimal_instance(components[schema["$ref"].split("/")[-1]], components)
    if "oneOf" in schema:  # a tagged union (a meeting resolution): its first kind
        return minimal_instance(schema["oneOf"][0], components)
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return minimal_instance(
            next(s for s in schema["anyOf"] if s.get("type") != "null"), components
        )
    if "allOf" in schema:
        return minimal_instance(schema["allOf"][0], components)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: minimal_instance(props[k], components) for k in schema.get("required", [])}
    if kind == "array":
        return [
            minimal_instance(schema["items"], components) for _ in range(schema.get("minItems", 0))
        ]
    if kind == "string" and schema.get("pattern") in _PATTERN_EXAMPLES:
        return _PATTERN_EXAMPLES[schema["pattern"]]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return max(0, schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return {}


def git_out(cwd: Path, *args: str) -> str:
    """Run ``git args`` in ``cwd`` (an identity given, for commits); its stdout, stripped.

    Raises:
        subprocess.CalledProcessError: git failed.
    """
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()
