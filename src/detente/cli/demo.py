"""``detente demo``: the documented end-to-end run on a throwaway clone.

The story, on a ``git clone --no-local`` of a real repository in a temporary directory:

1. a real server starts on a free loopback port (uvicorn in a background thread, SQLite
   store in the temporary directory, lease sweeper every 0.2 s);
2. a watcher subscribes to ``GET /v1/events/stream`` and prints every event as it arrives;
3. ``claude-code`` claims a directory ``D/**`` and gets a worktree at the base commit;
4. ``codex`` claims a file under ``D/``: overlap, reported with that file as the witness,
   and the claim is ``negotiating`` with its meeting options;
5. ``cursor`` claims a file elsewhere with a 2 s lease and never renews it;
6. ``claude-code`` and ``codex`` renew their leases; ``claude-code`` edits a file in its
   worktree and its status shows the changed file;
7. the server's sweeper expires ``cursor``'s lease (waited for on the stream, bounded);
8. ``codex`` withdraws (abandon, recording its diff summary) and ``audit verify`` passes.

Every claim goes through the same code as ``detente claim open`` (``workspace.open_claim``)
and the same :class:`~detente.client.Client`.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from detente.cli.demo_watch import DemoFailed, Watcher
from detente.cli.render import Output
from detente.client import Client
from detente.operations import wire

__all__ = ["DemoFailed", "run_demo", "source_repository"]

AGENTS = ("claude-code", "codex", "cursor")
_SHORT_TTL = 2
_LONG_TTL = 120
_WAIT = 20.0


def source_repository(cwd: Path) -> str:
    """detente's own git checkout when the CLI runs from one, else the repository at cwd."""
    import detente
    from detente.vcs import open_repo

    root = Path(detente.__file__).resolve().parent.parent.parent
    pyproject = root / "pyproject.toml"
    if (
        (root / ".git").exists()
        and pyproject.is_file()
        and 'name = "detente"' in pyproject.read_text(encoding="utf-8", errors="replace")
    ):
        return str(root)
    return str(open_repo(cwd).path)


def _pick_targets(clone: Path) -> tuple[str, str, str]:
    """A directory with several files, one file inside it, and one file outside it."""
    from detente.vcs import Git

    files = [f for f in Git(clone).run("ls-files", "-z").stdout.split("\0") if f]
    by_dir: dict[str, list[str]] = {}
    for f in files:
        top, sep, _ = f.partition("/")
        if sep and not top.startswith("."):
            by_dir.setdefault(top, []).append(f)
    dirs = sorted((d for d, fs in by_dir.items() if len(fs) >= 2), key=lambda d: -len(by_dir[d]))
    if not dirs:
        raise DemoFailed(
            "the demo needs a repository with a directory of at least two tracked files"
        )
    directory = dirs[0]
    inside = sorted(by_dir[directory], key=lambda f: (-f.count("/"), f))[0]
    outside = sorted(
        (f for f in files if not f.startswith(directory + "/")),
        key=lambda f: (f.startswith("."), f.count("/"), f),
    )
    if not outside:
        raise DemoFailed(f"the demo needs a tracked file outside {directory}/")
    return f"{directory}/**", inside, outside[0]


def run_demo(source: str, *, out: Output, keep: bool = False) -> dict[str, Any]:
    """Run the demo story (see the module docstring) and return its summary.

    Args:
        source: a git URL or path with at least one commit.
        out: where progress goes (stdout in text mode, stderr in JSON mode).
        keep: keep the temporary directory (clone, worktrees, store) afterwards.

    Returns:
        ``{ok, source, clone, server, store, claims{agent: {...}}, overlap{claimId,
        withClaimId, mine, theirs, witness}, renewed[], expired[], changedFiles[],
        events, eventTypes[], auditOk, audit, elapsedSeconds, kept}``.

    Raises:
        DemoFailed: a step did not behave as documented (the message says which).
        DetenteError: git, the store or the server failed.
    """
    started = time.monotonic()
    lock = threading.Lock()

    def say(message: str) -> None:
        with lock:
            out.progress(message)

    tmp = Path(tempfile.mkdtemp(prefix="detente-demo-"))
    try:
        summary = _story(source, tmp, say)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    summary["elapsedSeconds"] = round(time.monotonic() - started, 2)
    summary["kept"] = keep
    say(f"demo finished in {summary['elapsedSeconds']} s" + (f"; kept {tmp}" if keep else ""))
    return summary


def _story(source: str, tmp: Path, say: Callable[[str], None]) -> dict[str, Any]:
    from detente import runtime
    from detente.cli.serving import bind, make_server, start_in_thread
    from detente.client.http import HttpClient
    from detente.vcs import Git

    name = Path(source.rstrip("/")).name.removesuffix(".git") or "repo"
    clone = tmp / name
    Git(tmp).run("clone", "--no-local", "--quiet", "--", source, str(clone), timeout=40)
    commits = int(Git(clone).text("rev-list", "--count", "HEAD"))
    say(f"1. cloned {source} ({commits} commit{'s' * (commits != 1)}) into {clone}")

    store_url = f"sqlite:///{tmp / 'detente.db'}"
    service = runtime.build_service([clone], store_url=store_url)
    sock, url = bind("127.0.0.1", 0)
    # Its log would bury the story on the same terminal: warnings and errors only.
    server = make_server(service, sweep_interval=0.2, log_level="warning")
    try:
        thread = start_in_thread(server, sock)  # StartupFailed names why it did not start
    except BaseException:
        sock.close()
        service.store.close()
        raise
    repo_name = service.list_repos()[0].name
    client = HttpClient.to(url, repo_name=repo_name)
    client.repo_path = clone
    watcher = Watcher(HttpClient.to(url), say)
    try:
        client.health()
        say(f"2. server listening on {url} (store {store_url})")
        watcher.start()
        summary = _Story(client, watcher, clone, say).run()
        summary.update(source=source, clone=str(clone), server=url, store=store_url)
        return summary
    finally:
        watcher.stop()
        client.close()
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        service.store.close()


class _Story:
    """Steps 3 to 10 of the module docstring, against a running server."""

    def __init__(
        self, client: Client, watcher: Watcher, clone: Path, say: Callable[[str], None]
    ) -> None:
        from detente.vcs import resolve_commit

        self.client, self.watcher, self.clone, self.say = client, watcher, clone, say
        self.directory, self.inside, self.outside = _pick_targets(clone)
        self.base = resolve_commit(clone, "HEAD")
        self.claims: dict[str, dict[str, Any]] = {}

    def run(self) -> dict[str, Any]:
        opened = self.open_claims()
        overlap = self.report_overlap(opened["codex"])
        renewed = self.renew("claude-code", "codex")
        changed = self.edit("claude-code")
        self.wait_for_expiry("cursor")
        self.withdraw("codex")
        audit = self.audit()
        expired = [c["id"] for c in self.claims.values() if c["status"] == "expired"]
        events = self.watcher.events
        return {
            "ok": bool(audit["ok"]) and expired == [self.claims["cursor"]["id"]],
            "claims": self.claims,
            "overlap": overlap,
            "renewed": renewed,
            "expired": expired,
            "changedFiles": changed,
            "events": len(events),
            "eventTypes": sorted({e["type"] for e in events}),
            "auditOk": bool(audit["ok"]),
            "audit": audit,
        }

    def open_claims(self) -> dict[str, wire.ClaimView]:
        from detente.cli import workspace

        plan = {
            "claude-code": (f"rework {self.directory}", self.directory, _LONG_TTL),
            "codex": (f"fix {self.inside}", self.inside, _LONG_TTL),
            "cursor": (f"touch up {self.outside}", self.outside, _SHORT_TTL),
        }
        opened: dict[str, wire.ClaimView] = {}
        for step, agent in enumerate(AGENTS, start=3):
            objective, target, ttl = plan[agent]
            body = workspace.claim_seed(
                repo=str(self.client.repo_name),
                objective=objective,
                base_commit=self.base,
                agent=agent,
                paths=[target],
                ttl=ttl,
            )
            result = workspace.open_claim(self.client, body)
            opened[agent] = result.response
            claim = result.response["claim"]
            self.claims[agent] = {
                "id": claim["id"],
                "status": claim["status"],
                "paths": claim["paths"],
                "branch": claim["branch"],
                "worktree": claim["worktree"],
                "ttlSeconds": ttl,
            }
            self.say(
                f"{step}. {agent} claims {target} (lease {ttl} s) -> {claim['status']}; "
                f"worktree {claim['worktree']} on {claim['branch']} at {self.base[:12]}"
            )
        return opened

    def report_overlap(self, response: wire.ClaimView) -> dict[str, Any]:
        from detente.cli.views import negotiation_options

        overlaps = response.get("overlaps", [])
        if response["claim"]["status"] != "negotiating" or not overlaps:
            raise DemoFailed(
                f"codex's claim on {self.inside} should overlap claude-code's {self.directory}"
            )
        first, meeting = overlaps[0], response.get("meeting")
        target = first["targets"][0]
        self.say(
            f"   overlap: codex's {target['mine']} vs {first['agent']['name']}'s "
            f"{target['theirs']}, witness {target['witness']} ({first['severity']}); "
            "codex is negotiating"
        )
        for option in negotiation_options(response["claim"], overlaps, meeting) if meeting else []:
            self.say(f"     option {option['label']:<9} {option['command']}")
        return {
            "claimId": response["claim"]["id"],
            "withClaimId": first["claimId"],
            "withAgent": first["agent"]["name"],
            "mine": target["mine"],
            "theirs": target["theirs"],
            "witness": target["witness"],
            "severity": first["severity"],
            "meetingId": meeting["id"] if meeting else None,
        }

    def renew(self, *agents: str) -> list[dict[str, Any]]:
        renewed = []
        for i, agent in enumerate(agents):
            current = self.client.get_claim(self.claims[agent]["id"])["claim"]
            after = self.client.renew(
                current["id"],
                expected_lease_revision=current["lease"]["revision"],
                expected_claim_revision=current["revision"],
                ttl_seconds=_LONG_TTL,
            )["claim"]
            lease = after["lease"]
            renewed.append(
                {"agent": agent, "claimId": after["id"], "leaseRevision": lease["revision"]}
            )
            before = current["lease"]["revision"]
            self.say(
                f"{'6.' if i == 0 else '  '} {agent} renews: lease revision {before} -> "
                f"{lease['revision']}, expires {lease['expiresAt']}"
            )
        return renewed

    def edit(self, agent: str) -> list[str]:
        from detente.cli.workspace import evidence

        with (Path(self.claims[agent]["worktree"]) / self.inside).open("a", encoding="utf-8") as fh:
            fh.write("\n# edited during the detente demo\n")
        proof = evidence(self.client.get_claim(self.claims[agent]["id"])["claim"])
        changed: list[str] = proof["changedFiles"]
        self.say(f"7. {agent} edits {self.inside} in its worktree; changed files now {changed}")
        return changed

    def wait_for_expiry(self, agent: str) -> None:
        claim_id = self.claims[agent]["id"]
        waited = self.watcher.wait_for(
            f"{agent}'s lease ({_SHORT_TTL} s) to expire",
            lambda events: any(
                e["type"] == "claim.expired" and e["subject"] == f"claim/{claim_id}" for e in events
            ),
            timeout=_SHORT_TTL + _WAIT,
        )
        status = self.client.get_claim(claim_id)["claim"]["status"]
        self.claims[agent]["status"] = status
        self.say(
            f"8. {agent} never renewed: the server's sweeper expired its claim ({status}, seen "
            f"on the stream after {waited:.1f} s); its history and targets are kept"
        )

    def withdraw(self, agent: str) -> None:
        from detente.cli.workspace import release_record

        current = self.client.get_claim(self.claims[agent]["id"])["claim"]
        head, diff = release_record(current)
        after = self.client.abandon(
            current["id"],
            expected_claim_revision=current["revision"],
            head_commit=head,
            diff_summary=diff,
            reason="withdrawn in favour of claude-code's claim",
        )["claim"]
        self.claims[agent]["status"] = after["status"]
        self.say(
            f"9. {agent} withdraws its claim ({after['status']}, head {str(head)[:12]} recorded)"
        )

    def audit(self) -> wire.Audit:
        head = int(self.client.health()["head"] or 0)
        self.watcher.wait_for(
            f"the stream to deliver event #{head}",
            lambda events: bool(events) and int(events[-1]["seq"]) >= head,
            timeout=_WAIT,
        )
        report = self.client.audit_verify()
        self.say(
            f"10. all {len(self.watcher.events)} events arrived on the stream; audit verify: "
            f"{'ok' if report['ok'] else 'FAILED'}, head {str(report['headHash'])[:16]}"
        )
        return report
