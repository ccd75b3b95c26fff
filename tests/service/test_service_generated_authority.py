"""Generated artifacts on a real repository: nested .gitattributes, and first-class
artifacts whose writes are judged on their generator inputs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.model import ClaimStatus
from detente.errors import OutOfScope, OverlapBlocking
from detente.service import ClaimView, RepoConfig, Service
from detente.storage.memory import MemoryStore

from source_repo import commit_all, make_source_repo
from support import counting_ids, seed

ARTIFACT = "docs/openapi.json"
TOML = (
    "[generated]\n"
    'patterns = ["build/**"]\n\n'
    "[[generated.artifacts]]\n"
    f'path = "{ARTIFACT}"\n'
    'inputs = ["src/settlement/*.py"]\n'
)


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        make_source_repo(root)
        self.head = self.commit({"detente.toml": TOML, ARTIFACT: "{}\n"})
        self.service = Service(
            MemoryStore(), FakeClock(), [RepoConfig("demo", path=root)], ids=counting_ids()
        )

    def open(self, *paths: str, agent: str, **kw: object) -> ClaimView:
        cmd = replace(seed(*paths, agent=agent, **kw), base_commit=self.head)
        return self.service.claims.open_claim(cmd)

    def commit(self, files: dict[str, str]) -> str:
        for path, text in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        self.head = commit_all(self.root, "more files")
        return self.head


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


def test_a_claim_on_an_artifacts_inputs_may_write_the_artifact(repo: Repo) -> None:
    alice = repo.open("src/settlement/retry.py", agent="alice").claim
    assert repo.service.claims.check_write(alice.id, [ARTIFACT]) == [ARTIFACT]


def test_two_claims_on_different_inputs_both_regenerate_the_artifact(repo: Repo) -> None:
    alice = repo.open("src/settlement/retry.py", agent="alice").claim
    bob = repo.open("src/settlement/ledger.py", agent="bob").claim
    carol = repo.open("docs/**", agent="carol").claim
    assert bob.status is carol.status is ClaimStatus.ACTIVE
    for claim in (alice, bob):
        assert repo.service.claims.check_write(claim.id, [ARTIFACT]) == [ARTIFACT]


def test_a_claim_off_the_inputs_is_refused_by_their_holder_and_told_the_inputs(
    repo: Repo,
) -> None:
    alice = repo.open("src/settlement/retry.py", agent="alice").claim
    dave = repo.open("web/**", agent="dave").claim
    with pytest.raises(OverlapBlocking) as caught:
        repo.service.claims.check_write(dave.id, [ARTIFACT])
    assert caught.value.extra["blockers"] == [
        {"path": ARTIFACT, "claimId": alice.id, "agent": "alice"}
    ]
    check = repo.service.gates.check_commit("demo", dave.id, [ARTIFACT])
    [finding] = check.to_wire()["findings"]
    assert finding["generatorInputs"] == ["src/settlement/*.py"]
    assert check.to_wire()["reasons"] == [
        f"{ARTIFACT} (generated from src/settlement/*.py) is held by claim {alice.id} (alice)"
    ]


def test_an_artifact_nobody_holds_the_inputs_of_is_outside_a_claim_off_them(
    repo: Repo,
) -> None:
    dave = repo.open("web/**", agent="dave").claim
    with pytest.raises(OutOfScope):
        repo.service.claims.check_write(dave.id, [ARTIFACT])
    check = repo.service.gates.check_commit("demo", dave.id, [ARTIFACT])
    assert check.to_wire()["reasons"] == [
        f"{ARTIFACT} (generated from src/settlement/*.py): claim {dave.id}'s targets cover "
        "none of its inputs"
    ]


def test_a_nested_gitattributes_marks_generated_files_below_it(repo: Repo) -> None:
    repo.commit(
        {
            "web/src/gen/.gitattributes": "*.ts linguist-generated\n",
            "web/src/gen/api.ts": "export const api = 1;\n",
            "web/src/gen/keep/.gitattributes": "hand.ts -linguist-generated\n",
            "web/src/gen/keep/hand.ts": "export const hand = 1;\n",
        }
    )
    repo.open("web/**", agent="alice")
    bob = repo.open("web/src/gen/api.ts", agent="bob")
    assert bob.overlaps == []
    assert bob.claim.status is ClaimStatus.ACTIVE
    carol = repo.open("web/src/gen/keep/hand.ts", agent="carol")
    assert carol.claim.status is ClaimStatus.NEGOTIATING  # unset by the deeper file


def test_detente_toml_patterns_still_mark_generated_files(repo: Repo) -> None:
    repo.commit({"build/out.js": "1;\n"})
    repo.open("build/**", agent="alice")
    bob = repo.open("build/out.js", agent="bob")
    assert bob.overlaps == []
