"""A push to a protected ref is judged by the symbols its commits touch, not whole files:
a claim scoped to one function integrates a commit that changes only that function, and a
commit of the same file that changes another function is refused, naming it."""

from __future__ import annotations

from dataclasses import replace

from hooks_harness import Server, Shared, commit, detente, git, run_git

from detente.domain.claims.model import ClaimStatus
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim

from support import seed

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


def test_a_push_is_judged_by_the_symbols_it_touches(shared: Shared, server: Server) -> None:
    base = commit(shared.work, "svc.py", SOURCE)
    git(shared.work, "push", "-q", "origin", "HEAD:main")
    detente(
        "--server", server.url, "hooks", "install", "--bare", str(shared.bare), "--name", "shared"
    )
    cmd = seed(repo="shared", agent="alice", branch="claim/alice", symbols=("svc.py::f",))
    claim = server.service.claims.open_claim(replace(cmd, base_commit=base)).claim
    assert claim.symbols == ("svc.py::f",)

    git(shared.work, "checkout", "-q", "-B", "claim/alice", base)
    trailer = f"Detente-Claim: {claim.id}"
    inside = commit(shared.work, "svc.py", SOURCE.replace("return 1", "return 10"), trailer)
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/claim/alice")
    review = CompleteClaim(
        claim.id,
        claim.revision,
        claim.fencing_token,
        BaseRef("refs/heads/main", base),
        Evidence(head_commit=inside, changed_files=("svc.py",)),
        integrate=False,
    )
    assert server.service.gates.complete(claim.id, review).claim.status is (
        ClaimStatus.READY_FOR_REVIEW
    )

    both = SOURCE.replace("return 1", "return 10").replace("return 2", "return 20")
    git(shared.work, "checkout", "-q", "-B", "stray", base)
    outside = commit(shared.work, "svc.py", both, trailer)
    refused = run_git(shared.work, "push", "-q", "origin", f"{outside}:refs/heads/main")
    assert refused.returncode != 0
    assert "svc.py changes svc.py::g outside claim" in refused.stderr
    assert git(shared.bare, "rev-parse", "refs/heads/main") == base

    accepted = run_git(shared.work, "push", "-q", "origin", f"{inside}:refs/heads/main")
    assert accepted.returncode == 0, accepted.stderr
    assert git(shared.bare, "rev-parse", "refs/heads/main") == inside
