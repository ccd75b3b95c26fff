"""Deterministic replays of the seed's races (issue #12), on the fake clock.

Each test is a script: the interleaving is fixed, time moves only when the script
advances the fake clock, git is real, and after every command the protocol invariants
are checked (``tests/invariant_checks.py``). Related single-race tests live with their
feature: generated files (``test_service_tree_severity.py``), deploying stale code
(``test_service_deploy.py``), integrations racing from threads
(``test_service_integration_race.py``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import TakeoverRequest
from detente.domain.claims.model import ClaimStatus
from detente.domain.meetings.model import MeetingStatus
from detente.domain.policy import Policy
from detente.errors import BranchInUse, StaleBase
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs import resolve_commit
from gates_support import commit, completion, git, hermetic

from support import counting_ids, seed


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """``main`` checked out in the repository's own working tree."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for name, text in {"a.py": "a = 1\n", "b.py": "b = 1\n", "README.md": "# r\n"}.items():
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root, git(root, "rev-parse", "HEAD")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(repo: tuple[Path, str], tmp_path: Path, clock: FakeClock) -> Service:
    return Service(
        SqliteStore(tmp_path / "d.db"),
        clock,
        [RepoConfig("demo", repo[0])],
        ids=counting_ids(),
        policy=Policy(takeover_grace_seconds=5),
        resolve_commit=resolve_commit,
    )


def _files(path: Path, base: str, **changes: str) -> dict[str, str]:
    tracked = git(path, "ls-tree", "--name-only", base).split("\n")
    files = {name: git(path, "show", f"{base}:{name}") + "\n" for name in tracked}
    files.update(changes)
    return files


def test_two_integrations_racing_on_one_expected_oid_one_lands_and_the_other_rebases(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    a = service.claims.open_claim(replace(seed("a.py", agent="a"), base_commit=m0)).claim
    b = service.claims.open_claim(replace(seed("b.py", agent="b"), base_commit=m0)).claim
    head_a = commit(path, _files(path, m0, **{"a.py": "a = 2\n"}), parent=m0, when=10)
    head_b = commit(path, _files(path, m0, **{"b.py": "b = 2\n"}), parent=m0, when=10)

    service.gates.complete(a.id, completion(a, head_a, m0, ("a.py",)))
    with pytest.raises(StaleBase) as lost:
        service.gates.complete(b.id, completion(b, head_b, m0, ("b.py",)))

    assert lost.value.extra["actual"] == head_a
    b = service.claims.get_claim(b.id).claim
    assert b.status is ClaimStatus.ACTIVE
    rebased = commit(path, _files(path, head_a, **{"b.py": "b = 2\n"}), parent=head_a, when=20)
    service.gates.complete(b.id, completion(b, rebased, head_a, ("b.py",)))
    assert git(path, "rev-parse", "refs/heads/main") == rebased
    assert (path / "a.py").read_text() == "a = 2\n" and (path / "b.py").read_text() == "b = 2\n"
    assert service.audit().ok


def test_an_agent_disappearing_mid_change_keeps_its_work_and_its_claim_until_taken_over(
    service: Service, repo: tuple[Path, str], clock: FakeClock
) -> None:
    path, m0 = repo
    gone = service.claims.open_claim(
        replace(seed("a.py", "b.py", agent="gone", ttl=60), base_commit=m0, branch="claim/gone")
    ).claim
    work = commit(path, _files(path, m0, **{"a.py": "a = 'half'\n"}), parent=m0, when=5)
    git(path, "update-ref", "refs/heads/claim/gone", work)
    waiting = service.claims.open_claim(replace(seed("b.py", agent="w", ttl=3600), base_commit=m0))
    assert waiting.claim.status is ClaimStatus.NEGOTIATING

    clock.advance(61)
    assert service.claims.get_claim(gone.id).claim.status is ClaimStatus.EXPIRED
    view = service.claims.get_claim(waiting.claim.id)
    assert view.claim.status is ClaimStatus.NEGOTIATING  # an expired claim still blocks
    clock.advance(5)
    successor = service.takeover.take_over(
        replace(seed("a.py", agent="next", ttl=3600), base_commit=""),
        TakeoverRequest(
            gone.id,
            service.claims.get_claim(gone.id).claim.revision,
            (("a.py", "continue"), ("b.py", "discard")),
        ),
    ).claim

    assert successor.takeover is not None
    assert successor.takeover["headCommit"] == work  # the evidence of its work is kept
    released = service.claims.get_claim(waiting.claim.id)
    assert released.claim.status is ClaimStatus.ACTIVE
    assert all(m.status is not MeetingStatus.OPEN for m in released.meetings)
    assert service.claims.check_write(successor.id, ["a.py"]) == ["a.py"]
    assert service.audit().ok


def test_a_user_edit_in_the_checkout_is_never_discarded_by_an_integration(
    service: Service, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    (path / "README.md").write_text("# r\nthe user's note\n")
    (path / "a.py").write_text("a = 'the user was here'\n")
    claim = service.claims.open_claim(replace(seed("a.py"), base_commit=m0)).claim
    head = commit(path, _files(path, m0, **{"a.py": "a = 2\n"}), parent=m0, when=10)

    with pytest.raises(BranchInUse) as refused:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))
    assert refused.value.extra["dirtyPaths"] == ["README.md", "a.py"]  # the whole checkout
    assert (path / "a.py").read_text() == "a = 'the user was here'\n"
    assert git(path, "rev-parse", "refs/heads/main") == m0

    git(path, "stash", "push", "-q", "--", "README.md")  # the user puts their note aside
    claim = service.claims.get_claim(claim.id).claim
    with pytest.raises(BranchInUse) as refused:
        service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))
    assert refused.value.extra["dirtyPaths"] == ["a.py"]

    git(path, "checkout", "--", "a.py")  # ... and drops their edit of a.py
    service.gates.complete(claim.id, completion(claim, head, m0, ("a.py",)))
    git(path, "stash", "pop", "-q")
    assert (path / "a.py").read_text() == "a = 2\n"
    assert (path / "README.md").read_text() == "# r\nthe user's note\n"
    assert git(path, "status", "--porcelain") == " M README.md"
