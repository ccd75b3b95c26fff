"""What a user of the default install does first, on the installed package (CI stage 1).

Run with the interpreter of a fresh virtualenv that holds only the detente wheel (no
extras, no test dependencies), from any directory. Standard library only. It checks:

1. the extras really are absent (numpy cannot be imported), so what follows runs on the
   default install's code paths;
2. ``detente serve`` starts, serves the dashboard at ``/`` and its stylesheet and script
   from the wheel, and takes a claim over HTTP (the claim path's similarity runs in the
   lexical mode, without numpy);
3. ``detente mcp`` answers an MCP ``initialize`` over stdio;
4. ``detente hooks install`` guards commits: a commit in a claim's worktree passes, and a
   commit of another claim's file from the main checkout is refused.

Exits non-zero, naming the step, on the first failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

BIN = Path(sys.executable).parent
DETENTE = str(BIN / "detente")


def step(text: str) -> None:
    print(f"-- {text}", flush=True)


def run(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=180)
    if check and done.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
    return done


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "src" / "app.py").write_text("def main():\n    return 1\n")
    (repo / "docs" / "guide.md").write_text("# Guide\n")
    run("git", "init", "-q", "-b", "main", cwd=repo)
    run("git", "config", "user.email", "ci@detente.invalid", cwd=repo)
    run("git", "config", "user.name", "detente CI", cwd=repo)
    run("git", "add", "-A", cwd=repo)
    run("git", "commit", "-q", "-m", "initial", cwd=repo)
    return repo


def read_json_document(stream: object) -> dict[str, object]:
    text = ""
    for line in stream:  # type: ignore[attr-defined]
        text += line
        try:
            return json.loads(text)  # type: ignore[no-any-return]
        except json.JSONDecodeError:
            continue
    raise SystemExit(f"no JSON document on stdout; got {text!r}")


def fetch(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.status, answer.read().decode()


def check_serve(repo: Path) -> None:
    step("detente serve: the dashboard and a claim over HTTP")
    server = subprocess.Popen(
        [DETENTE, "serve", "--repo", str(repo), "--port", "0", "--json"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        described = read_json_document(server.stdout)
        if "listening" not in described:  # an error document: the server did not start
            raise SystemExit(f"detente serve did not start: {json.dumps(described)}")
        url = str(described["listening"])
        status, page = fetch(url + "/")
        assert status == 200 and "<html" in page.lower(), (status, page[:200])
        assets = re.findall(r'(?:href|src)="(/[^"]+\.(?:css|js))"', page)
        assert assets, "the dashboard page links no stylesheet or script"
        for asset in assets:
            status, body = fetch(url + asset)
            assert status == 200 and body, (asset, status)
        opened = run(
            DETENTE,
            "--server",
            url,
            "claim",
            "open",
            "-o",
            "tidy the guide",
            "-p",
            "docs/**",
            "--no-worktree",
            "--json",
            cwd=repo,
        )
        claim = json.loads(opened.stdout)["claim"]
        assert claim["status"] == "active", claim
    except BaseException:
        server.kill()
        print(server.stderr.read()[-4000:] if server.stderr else "", file=sys.stderr)
        raise
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    assert server.returncode == 0, (
        server.returncode,
        server.stderr.read() if server.stderr else "",
    )


def check_mcp(repo: Path) -> None:
    step("detente mcp: initialize over stdio")
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "detente-ci", "version": "0"},
        },
    }
    done = subprocess.run(
        [DETENTE, "mcp", "--repo", str(repo)],
        cwd=repo,
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, f"no answer to initialize (exit {done.returncode}): {done.stderr[-2000:]}"
    answer = json.loads(lines[0])
    assert answer.get("id") == 1 and "serverInfo" in answer.get("result", {}), answer
    print(f"   server {answer['result']['serverInfo']}")


def check_hooks(repo: Path) -> None:
    step("detente hooks install: a guarded commit passes, another claim's file is refused")
    run(DETENTE, "hooks", "install", cwd=repo)
    opened = run(
        DETENTE, "claim", "open", "-o", "speed up main", "-p", "src/**", "--json", cwd=repo
    )
    worktree = Path(json.loads(opened.stdout)["claim"]["worktree"])
    (worktree / "src" / "app.py").write_text("def main():\n    return 2\n")
    run("git", "add", "-A", cwd=worktree)
    run("git", "commit", "-q", "-m", "main returns 2", cwd=worktree)
    (repo / "src" / "app.py").write_text("def main():\n    return 3\n")
    run("git", "add", "-A", cwd=repo)
    refused = run("git", "commit", "-q", "-m", "sneak", cwd=repo, check=False)
    assert refused.returncode != 0, "the guard let a commit of a held file through"
    assert "refused" in refused.stderr, refused.stderr


def main() -> int:
    step(f"interpreter {sys.executable}")
    try:
        import numpy  # noqa: F401
    except ImportError:
        pass
    else:
        raise SystemExit("numpy is installed: this is not the default install")
    root = Path(tempfile.mkdtemp(prefix="detente-smoke-"))
    try:
        repo = make_repo(root)
        check_serve(repo)
        check_mcp(repo)
        check_hooks(repo)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    step("the default install runs serve, the dashboard, MCP over stdio and the hooks")
    return 0


if __name__ == "__main__":
    os.environ.pop("DETENTE_URL", None)
    sys.exit(main())
