"""[[generated.artifacts]] in detente.toml, and the served [generated] keys reaching overlap."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from detente.config import effective, load_config
from detente.domain.claims.model import ClaimStatus
from detente.domain.overlap.trees import Artifact
from detente.errors import ValidationError
from detente.runtime import build_service

from support import seed

ARTIFACTS = """
[[generated.artifacts]]
path = "./docs/openapi.json"
inputs = ["src/api/", "src/api/**"]
"""


def test_artifacts_are_read_with_canonical_patterns_and_shown(tmp_path: Path) -> None:
    (tmp_path / "detente.toml").write_text(ARTIFACTS, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.artifacts == (Artifact("docs/openapi.json", ("src/api/**",)),)
    assert effective(config)["generated.artifacts"] == ["docs/openapi.json <- src/api/**"]
    assert config.source("generated.artifacts") == "detente.toml"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('[generated]\nartifacts = "docs/x.json"\n', "must be an array of tables"),
        ('[[generated.artifacts]]\npath = "x.json"\n', "exactly path and inputs"),
        ('[[generated.artifacts]]\npath = "x.json"\ninputs = []\n', "non-empty array"),
        ('[[generated.artifacts]]\npath = "x.json"\ninputs = [1]\n', "inputs are strings"),
        ('[[generated.artifacts]]\npath = "/abs"\ninputs = ["a/**"]\n', "entry 1:"),
    ],
)
def test_a_bad_artifact_entry_is_refused_naming_the_key(
    tmp_path: Path, text: str, why: str
) -> None:
    (tmp_path / "detente.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        load_config(tmp_path)
    assert caught.value.extra["field"] == "generated.artifacts"
    assert why in caught.value.detail


def test_the_served_files_generated_patterns_apply_at_every_commit(tmp_path: Path) -> None:
    root = tmp_path / "main"
    root.mkdir()
    run = {"cwd": root, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)  # type: ignore[call-overload]
    (root / "gen").mkdir()
    (root / "gen" / "api.ts").write_text("export const a = 1;\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
    subprocess.run(  # type: ignore[call-overload]
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "init"], **run
    )
    out = subprocess.run(["git", "rev-parse", "HEAD"], text=True, **run)  # type: ignore[call-overload]
    head = out.stdout.strip()
    policy = tmp_path / "policy.toml"  # not committed: only the served configuration says it
    policy.write_text('[generated]\npatterns = ["gen/**"]\n', encoding="utf-8")
    service = build_service([root], store_url="memory://", config_file=policy)
    try:
        repo = "main"  # the main worktree's directory name
        service.claims.open_claim(replace(seed("gen/**", repo=repo), base_commit=head))
        bob = service.claims.open_claim(
            replace(seed("gen/api.ts", agent="bob", repo=repo), base_commit=head)
        )
        assert bob.claim.status is ClaimStatus.ACTIVE
        assert bob.overlaps == []
    finally:
        service.store.close()
