"""A section patch through the service: CommonMark sections, the file's own line endings."""

from __future__ import annotations

import subprocess
from pathlib import Path

from detente.clock import FakeClock
from detente.domain.claims.model import MemoryImpact
from detente.domain.memory import commands as mc
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from support import counting_ids, seed

NOTES = (
    b"# Notes\r\n\r\n## Build\r\n\r\nmake\r\n\r\nStyle\r\n-----\r\n\r\nAlways pep8. Owned by B.\r\n"
)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "NOTES.md").write_bytes(NOTES)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "notes"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=root,
            check=True,
            capture_output=True,
        )
    return root


def test_patching_build_in_a_crlf_file_keeps_the_setext_section_and_crlf(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    svc = Service(MemoryStore(), FakeClock(), [RepoConfig("demo", repo)], ids=counting_ids())
    view = svc.memory.register_document(mc.Register("demo", "NOTES.md", "section_owned"))
    assert [s["key"] for s in view.to_wire()["sections"]] == ["notes", "build", "style"]
    impact = MemoryImpact("NOTES.md", sections=("build",))
    claim = svc.claims.open_claim(seed(agent="alice", memory_impacts=(impact,))).claim
    svc.memory.patch_section(
        mc.PatchSection(
            "demo",
            "NOTES.md",
            "build",
            claim_id=claim.id,
            expected_section_revision=view.section("build")["revision"],
            expected_file_hash=view.document.file_hash,
            fencing_token=claim.fencing_token,
            body="\nninja\nand tests\n\n",
        )
    )
    assert (repo / "NOTES.md").read_bytes() == NOTES.replace(b"make\r\n", b"ninja\r\nand tests\r\n")
