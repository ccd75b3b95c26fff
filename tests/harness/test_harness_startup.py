"""What a harness hook call imports: it runs before every edit, so judging one loads
neither the web stack nor pydantic, the command-line parser, nor the service's write
gates (the budget, measured by ``bench/harness_hooks.py``: 100 ms in server mode, 200 ms
in local mode). A server-mode call talks HTTP through the standard library's
:mod:`http.client` (with the :mod:`email` parser it brings, but not :mod:`ssl` for a plain
``http://`` server), starts no git process in a plain repository layout (so never loads
:mod:`subprocess`); a local call loads no HTTP client at all. Each case runs the real hook
process on a real repository and store and is refused, so the whole path was taken.

Neither mode generates classes it can do without (``dataclasses`` compiles each
generated method from source on every start): a server-mode call loads no
:mod:`dataclasses` at all, a local one only the families its repository's log holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from api.conftest import running
from detente.client.connect import open_local
from detente.client.seeds import claim_seed
from detente.runtime import build_service

from harness_support import hook_env

#: Never imported by a hook call, in either mode.
NEVER = (
    "fastapi",
    "starlette",
    "uvicorn",
    "pydantic",
    "httpx",
    "typer",
    "click",
    "rich",
    "detente.api",
    "detente.mcp_server",
    "detente.dashboard",
    "detente.server",
    "detente.operations.bodies",
    "detente.operations.wire",
    "detente.index.diff",
)
#: Not imported in local mode either: the write gates, the advisory overlap views, and
#: no HTTP client (nor what :mod:`http.client` imports); in a repository whose log holds
#: no meeting, memory document, patch, resource or check, none of those families, and
#: neither the reactions nor the deciding modules when nothing is due.
NOT_LOCALLY = (
    "detente.service.gates",
    "detente.domain.agents.advisory",
    "detente.client.stdlib_http",
    "http.client",
    "ssl",
    "email.parser",
    "detente.domain.meetings.model",
    "detente.domain.meetings.evolve",
    "detente.domain.meetings.reactions",
    "detente.domain.memory.model",
    "detente.domain.gates.model",
    "detente.domain.resources.model",
    "detente.domain.checks.model",
    "detente.domain.claims.decide",
)
#: A server-mode hook is a client: none of the service, the store, the claim model; nor
#: the symbol parser (one request judges a file whole unless symbols matter).
NOT_AS_CLIENT = (
    "detente.service",
    "detente.runtime",
    "detente.storage",
    "sqlite3",
    "logging",
    "tree_sitter",
    "detente.index",
    # a plain http:// server, an edit (not a shell command), a plain repository layout
    "ssl",
    "subprocess",
    "detente.harness.shell_paths",
    # no generated classes: the hook path's records are named tuples
    "dataclasses",
    "inspect",
)

_PROBE = """
import json, os, sys
from detente.cli.main import main
sys.argv = ["detente", *sys.argv[1:]]
def _no_teardown_skip(code):  # the hook leaves with os._exit: let the probe report first
    raise SystemExit(code)
os._exit = _no_teardown_skip
try:
    main()
except SystemExit:
    pass
watched = %r
print(json.dumps(sorted(m for m in watched if m in sys.modules)), file=sys.stderr)
"""


def _repo(tmp_path: Path, *, beat: bool = True) -> Path:
    top = tmp_path / "project"
    (top / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=top, check=True)
    for name in ("own", "held"):
        (top / "src" / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    subprocess.run(["git", "add", "-A"], cwd=top, check=True)
    ident = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", *ident, "commit", "-qm", "src"], cwd=top, check=True)
    with open_local(top) as client:
        for agent, session, path in (("alice", "s1", "src/own.py"), ("bob", None, "src/held.py")):
            client.open_claim(
                claim_seed(
                    repo=client.repo_name or "project",
                    objective=f"{agent} works on {path}",
                    agent=agent,
                    session=f"claude-{session}" if session else None,
                    base_commit="HEAD",
                    paths=[path],
                    ttl=3600,
                )
            )
    if beat:  # the session renewed less than a minute ago: no heartbeat in this call
        stamp = top / ".git" / "detente" / "harness" / "claude-s1.beat"
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    return top


def _hook(
    top: Path, env: dict[str, str], watched: tuple[str, ...]
) -> tuple[dict[str, object], list[str]]:
    payload = {
        "session_id": "s1",
        "cwd": str(top),
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {
            "file_path": str(top / "src" / "held.py"),
            "old_string": "return 1",
            "new_string": "return 2",
        },
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE % (list(watched),), "hook-harness", "claude", "pre-tool"],
        input=json.dumps(payload),
        cwd=top,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    loaded: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return json.loads(done.stdout), loaded


def _denied(answer: dict[str, object]) -> bool:
    output = answer.get("hookSpecificOutput")
    return isinstance(output, dict) and output.get("permissionDecision") == "deny"


def test_a_local_hook_call_imports_no_web_stack_no_parser_no_http_client_and_no_write_gates(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path)
    env = hook_env(tmp_path, DETENTE_LOCAL="1")

    answer, loaded = _hook(top, env, NEVER + NOT_LOCALLY)

    assert _denied(answer), answer
    assert loaded == []


def test_a_local_hook_call_that_renews_the_session_imports_no_pydantic_either(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path, beat=False)
    env = hook_env(tmp_path, DETENTE_LOCAL="1")

    answer, loaded = _hook(top, env, NEVER + NOT_LOCALLY)

    with open_local(top) as client:
        agent = client.get_agent("claude-s1")["agent"]
    assert _denied(answer), answer
    assert agent["status"] == "active"
    assert loaded == []


def test_a_server_mode_hook_call_is_a_light_client_on_the_standard_library(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path)
    service = build_service([top])
    try:
        with running(service) as url:
            answer, loaded = _hook(top, hook_env(tmp_path, DETENTE_URL=url), NEVER + NOT_AS_CLIENT)
    finally:
        service.store.close()

    assert _denied(answer), answer
    assert loaded == []
