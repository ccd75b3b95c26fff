"""Tree-aware severity and generated artifacts, judged on a real repository's commits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope
from detente.domain.claims.model import ClaimStatus
from detente.domain.invariants import state_violations
from detente.domain.overlap.model import Severity
from detente.errors import InvalidTransition, OverlapBlocking, ValidationError
from detente.service import ClaimView, RepoConfig, Service
from detente.storage.memory import MemoryStore

from source_repo import commit_all, make_source_repo
from support import counting_ids, seed


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.head = make_source_repo(root)
        self.service = Service(
            MemoryStore(), FakeClock(), [RepoConfig("demo", path=root)], ids=counting_ids()
        )

    def open(self, *paths: str, agent: str, **kw: object) -> ClaimView:
        cmd = replace(seed(*paths, agent=agent, **kw), base_commit=self.head)
        return self.service.claims.open_claim(cmd)

    def commit(self, files: dict[str, str]) -> None:
        for path, text in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.head = commit_all(self.root, "more files")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def test_globs_that_meet_only_in_missing_directories_are_potential_and_both_active(
    repo: Repo,
) -> None:
    alice = repo.open("src/*/routes/*.py", agent="alice")
    bob = repo.open("src/settlement/**", agent="bob")
    assert bob.claim.status is ClaimStatus.ACTIVE
    [overlap] = bob.overlaps
    assert overlap.claim_id == alice.claim.id
    assert overlap.severity is Severity.POTENTIAL
    assert "exist at neither base commit" in overlap.reason
    assert bob.meetings == []


def test_the_same_globs_block_once_a_file_both_cover_exists_and_name_it(repo: Repo) -> None:
    repo.commit({"src/settlement/routes/pay.py": "def pay() -> None: ...\n"})
    repo.open("src/*/routes/*.py", agent="alice")
    bob = repo.open("src/settlement/**", agent="bob")
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = bob.overlaps
    assert overlap.severity is Severity.BLOCKING
    assert overlap.targets[0].witness == "src/settlement/routes/pay.py"
    assert "exists at the base commit" in overlap.reason


def test_witnesses_prefer_an_existing_file(repo: Repo) -> None:
    repo.open("src/**", agent="alice")
    bob = repo.open("**/*.py", agent="bob")
    assert bob.overlaps[0].targets[0].witness == "src/settlement/__init__.py"


def test_a_new_literal_path_named_by_both_blocks_and_so_does_a_glob_over_it(
    repo: Repo,
) -> None:
    repo.open("src/settlement/fees.py", agent="alice")
    bob = repo.open("src/settlement/fees.py", agent="bob")
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    assert "literally" in bob.overlaps[0].reason
    carol = repo.open("src/settlement/fees.*", agent="carol")
    assert carol.claim.status is ClaimStatus.NEGOTIATING
    assert {o.severity for o in carol.overlaps} == {Severity.BLOCKING}


@pytest.mark.parametrize(
    ("glob", "literal"),
    [("src/api/**", "src/api/app.py"), ("docs/**", "docs/a.md"), ("*.md", "NEW.md")],
)
@pytest.mark.parametrize("glob_first", [True, False])
def test_a_file_one_claim_intends_to_create_is_a_real_overlap_with_a_glob_over_it(
    repo: Repo, glob: str, literal: str, glob_first: bool
) -> None:
    first, second = (glob, literal) if glob_first else (literal, glob)
    holder = repo.open(first, agent="alice")
    newcomer = repo.open(second, agent="bob")

    assert newcomer.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = newcomer.overlaps
    assert (overlap.claim_id, overlap.severity) == (holder.claim.id, Severity.BLOCKING)
    assert overlap.targets[0].witness == literal
    assert "names" in overlap.reason and repr(literal) in overlap.reason


def test_a_module_that_resolves_to_missing_paths_is_only_potential_against_a_glob(
    repo: Repo,
) -> None:
    repo.open("web/**", agent="alice")
    bob = repo.open(agent="bob", modules=("storage.other",))
    assert bob.claim.status is ClaimStatus.ACTIVE
    assert [o.severity for o in bob.overlaps] == [Severity.POTENTIAL]
    carol = repo.open("internal/**", agent="carol")
    dave = repo.open(agent="dave", modules=("internal/storage",))
    severities = {o.claim_id: o.severity for o in dave.overlaps}
    assert severities[carol.claim.id] is Severity.BLOCKING  # internal/storage/store.go
    assert set(severities.values()) == {Severity.BLOCKING, Severity.POTENTIAL}
    [held] = [o for o in dave.overlaps if o.claim_id == carol.claim.id]
    assert held.targets[0].witness == "internal/storage/store.go"


def test_files_marked_linguist_generated_create_no_overlap(repo: Repo) -> None:
    repo.commit(
        {
            ".gitattributes": (
                "*.pb.go linguist-generated\n/web/src/gen/** linguist-generated=true\n"
            ),
            "web/src/gen/api.ts": "export const api = 1;\n",
            "internal/storage/store.pb.go": "package storage\n",
        }
    )
    repo.open("web/**", "internal/storage/*.go", agent="alice")
    bob = repo.open("web/src/gen/api.ts", "internal/storage/store.pb.go", agent="bob")
    assert bob.claim.status is ClaimStatus.ACTIVE
    assert bob.overlaps == []
    carol = repo.open("web/src/*.ts", agent="carol")
    assert carol.claim.status is ClaimStatus.NEGOTIATING  # web/src/client.ts is real source


def test_detente_toml_generated_patterns_create_no_overlap(repo: Repo) -> None:
    repo.commit(
        {
            "detente.toml": '[generated]\npatterns = ["docs/api/**"]\n',
            "docs/api/index.md": "# API\n",
        }
    )
    repo.open("docs/**", agent="alice")
    bob = repo.open("docs/api/index.md", agent="bob")
    assert bob.overlaps == []
    assert bob.claim.status is ClaimStatus.ACTIVE


def test_a_repository_without_a_checkout_keeps_glob_verdicts() -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    service.claims.open_claim(seed("src/*/routes/*.py", agent="alice"))
    bob = service.claims.open_claim(seed("src/settlement/**", agent="bob"))
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    assert bob.overlaps[0].severity is Severity.BLOCKING


def test_a_potential_overlap_leaves_both_active_but_neither_may_write_the_shared_new_file(
    repo: Repo,
) -> None:
    alice = repo.open("src/**", agent="alice")
    bob = repo.open("src/settlement/new_*.py", agent="bob")
    assert bob.claim.status is ClaimStatus.ACTIVE
    assert bob.overlaps[0].severity is Severity.POTENTIAL
    new = ["src/settlement/new_fees.py"]
    with pytest.raises(OverlapBlocking, match=bob.claim.id):
        repo.service.claims.check_write(alice.claim.id, new)
    with pytest.raises(OverlapBlocking, match=alice.claim.id):
        repo.service.claims.check_write(bob.claim.id, new)
    other = ["src/settlement/other_new.py"]
    assert repo.service.claims.check_write(alice.claim.id, other) == other


def test_two_globs_meeting_only_in_new_paths_may_not_both_create_one_file(repo: Repo) -> None:
    one = repo.open("newpkg/*.py", agent="one")
    two = repo.open("newpkg/**/core.py", agent="two")
    assert two.claim.status is ClaimStatus.ACTIVE
    for claim in (one, two):
        with pytest.raises(OverlapBlocking):
            repo.service.claims.check_write(claim.claim.id, ["newpkg/core.py"])
    assert repo.service.claims.check_write(one.claim.id, ["newpkg/util.py"]) == ["newpkg/util.py"]


def test_a_potential_overlap_still_refuses_the_holders_existing_files(repo: Repo) -> None:
    alice = repo.open("src/**", agent="alice")
    bob = repo.open("src/settlement/new_*.py", agent="bob")
    with pytest.raises(OverlapBlocking) as refused:
        repo.service.claims.check_write(bob.claim.id, ["src/settlement/__init__.py"])
    assert refused.value.extra["blockers"][0]["claimId"] == alice.claim.id


def test_a_new_literal_path_named_by_both_is_writable_by_neither_newcomer(repo: Repo) -> None:
    alice = repo.open("src/settlement/fees.py", agent="alice")
    bob = repo.open("src/settlement/fees.py", agent="bob")
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    assert repo.service.claims.check_write(alice.claim.id, ["src/settlement/fees.py"])
    with pytest.raises(OverlapBlocking):
        repo.service.claims.check_write(bob.claim.id, ["src/settlement/fees.py"])


def test_a_regenerated_artifact_outside_the_claim_passes_its_commit_check(repo: Repo) -> None:
    repo.commit({".gitattributes": "/web/src/gen/** linguist-generated\n"})
    repo.commit({"web/src/gen/api.ts": "export const api = 1;\n"})
    alice = repo.open("internal/storage/*.go", agent="alice")
    repo.open("web/src/gen/**", agent="gen")

    check = repo.service.gates.check_commit(
        "demo", alice.claim.id, ["internal/storage/store.go", "web/src/gen/api.ts"]
    )

    assert check.ok, check.to_wire()["reasons"]
    outside = repo.service.gates.check_commit("demo", alice.claim.id, ["web/src/client.ts"])
    assert [f.kind for f in outside.findings] == ["outside"]


def _with_submodule(repo: Repo, path: str) -> None:
    """Commit a gitlink (a submodule's pointer, mode 160000) at ``path``."""
    from source_repo import git

    git(repo.root, "update-index", "--add", "--cacheinfo", f"160000,{repo.head},{path}")
    git(repo.root, "commit", "-q", "-m", f"submodule {path}")
    repo.head = git(repo.root, "rev-parse", "HEAD")


def test_a_submodule_path_exists_so_a_glob_over_it_blocks_a_claim_of_the_submodule(
    repo: Repo,
) -> None:
    _with_submodule(repo, "vendor/lib")
    alice = repo.open("vendor/**", agent="alice")
    bob = repo.open("vendor/lib/", agent="bob")

    assert bob.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = bob.overlaps
    assert (overlap.claim_id, overlap.severity) == (alice.claim.id, Severity.BLOCKING)
    assert overlap.targets[0].witness == "vendor/lib"


def test_a_claim_of_the_submodules_directory_may_write_its_pointer(repo: Repo) -> None:
    _with_submodule(repo, "vendor/lib")
    bob = repo.open("vendor/lib/", agent="bob")
    other = repo.open("README.md", agent="carol")

    assert repo.service.claims.check_write(bob.claim.id, ["vendor/lib"]) == ["vendor/lib"]
    with pytest.raises(OverlapBlocking, match=bob.claim.id):
        repo.service.claims.check_write(other.claim.id, ["vendor/lib"])


def test_either_claim_of_a_potential_overlap_may_open_a_meeting_that_stays_while_it_lasts(
    repo: Repo,
) -> None:
    from detente.domain.meetings.commands import Resolve
    from detente.domain.meetings.model import MeetingStatus
    from detente.domain.meetings.on_request import RequestMeeting
    from detente.domain.meetings.resolution_types import resolution_from_wire

    alice = repo.open("src/*/routes/*.py", agent="alice").claim
    bob = repo.open("src/settlement/**", agent="bob").claim
    assert bob.status is ClaimStatus.ACTIVE

    view = repo.service.meetings.request_meeting(
        RequestMeeting(bob.id, bob.revision, alice.id, reason="who writes the routes?")
    )

    meeting = view.meeting
    assert meeting.status is MeetingStatus.OPEN and meeting.requested_by == bob.id
    assert set(meeting.participants) == {alice.id, bob.id}
    assert [t.target for t in meeting.contested_targets] == ["src/*/routes/*.py"]
    assert {c.status for c in view.claims} == {ClaimStatus.ACTIVE}
    repo.open("README.md", agent="carol")  # another command: the room is not dissolved
    assert repo.service.meetings.get_meeting(meeting.id).status is MeetingStatus.OPEN
    with pytest.raises(InvalidTransition, match=meeting.id):
        repo.service.meetings.request_meeting(RequestMeeting(alice.id, alice.revision, bob.id))

    resolution = resolution_from_wire({"type": "serialize", "first": alice.id, "then": bob.id})
    resolved = repo.service.meetings.resolve(
        Resolve(
            meeting.id, repo.service.meetings.get_meeting(meeting.id).revision, resolution, "lead"
        )
    )
    assert resolved.meeting.status is MeetingStatus.RESOLVED
    assert repo.service.claims.get_claim(bob.id).claim.status is ClaimStatus.SUSPENDED


def test_a_meeting_is_asked_only_over_a_potential_overlap(repo: Repo) -> None:
    from detente.domain.meetings.on_request import RequestMeeting

    alice = repo.open("src/**", agent="alice").claim
    bob = repo.open("src/settlement/__init__.py", agent="bob").claim  # blocking: it exists
    carol = repo.open("web/**", agent="carol").claim  # no overlap with alice
    with pytest.raises(InvalidTransition, match="blocking"):
        repo.service.meetings.request_meeting(RequestMeeting(bob.id, bob.revision, alice.id))
    with pytest.raises(ValidationError) as refused:
        repo.service.meetings.request_meeting(RequestMeeting(carol.id, carol.revision, alice.id))
    assert refused.value.field == "withClaimId"


@pytest.mark.parametrize(
    ("first", "second"), [("vendor/lib", "vendor/lib/"), ("vendor/lib/", "vendor/lib")]
)
def test_a_submodule_named_as_a_path_and_as_a_directory_is_one_target(
    repo: Repo, first: str, second: str
) -> None:
    _with_submodule(repo, "vendor/lib")
    holder = repo.open(first, agent="alice")
    newcomer = repo.open(second, agent="bob")

    assert newcomer.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = newcomer.overlaps
    assert (overlap.claim_id, overlap.severity) == (holder.claim.id, Severity.BLOCKING)
    assert overlap.targets[0].witness == "vendor/lib"
    assert repo.service.claims.check_write(holder.claim.id, ["vendor/lib"]) == ["vendor/lib"]


def test_two_granted_scopes_that_meet_only_in_missing_paths_are_no_double_authority(
    repo: Repo,
) -> None:
    """Invariant 3 judges the granted parts of a pair on their own: each claim waits for
    a pending target the other holds, and their granted parts meet only in paths that
    exist nowhere (``docs/settlement/...``), which is no double authority."""
    alice = repo.open(agent="alice", modules=("settlement",))
    bob = repo.open("docs/**", agent="bob")
    assert bob.claim.status is ClaimStatus.ACTIVE  # potential against the module
    a = repo.service.claims.change_scope(
        ChangeScope(alice.claim.id, alice.claim.revision, add_paths=("docs/guide.md",))
    )
    b = repo.service.claims.change_scope(
        ChangeScope(bob.claim.id, bob.claim.revision, add_paths=("src/settlement/retry.py",))
    )
    assert a.claim.pending_paths == ("docs/guide.md",)
    assert b.claim.pending_paths == ("src/settlement/retry.py",)
    assert state_violations(repo.service.fresh("demo")) == []
