"""``claim open`` / ``claim status`` text shows the whole declared intent."""

from __future__ import annotations

from pathlib import Path

from cli_harness import Cli


def _rows(text: str) -> dict[str, str]:
    rows = {}
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("    "):
            label, _, value = line.strip().partition(" ")
            rows[label] = value.strip()
    return rows


def test_claim_open_shows_memory_sections_deploy_contracts_and_tests(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("# Agents\n\n## Build\n\nmake\n")
    result = Cli(repo)(
        "claim", "open", "-o", "ship it", "-p", "src/pkg/a.py", "--no-worktree",
        "--memory", "AGENTS.md#build", "--memory", "docs/guide.md",
        "--deploy", "staging", "--contract", "http:api/v2:add field", "--contract", "auth",
        "--test", "unit",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    assert rows["memory"] == "AGENTS.md#build, docs/guide.md"
    assert rows["deploy"] == "staging"
    assert rows["contracts"] == "http:api/v2:add field, auth"
    assert rows["tests"] == "unit"
    claim_id = result.stdout.split()[1]
    assert _rows(Cli(repo)("claim", "status", claim_id).stdout)["deploy"] == "staging"


def test_text_with_emoji_codes_prints_as_stored_in_open_status_and_list(repo: Path) -> None:
    objective = "fix :b: and :smile: x"
    result = Cli(repo)(
        "claim", "open", "-o", objective, "-p", "q2.py", "--no-worktree",
        "--contract", "a:b:c", "--agent", "bot:b:",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    assert rows["objective"] == objective
    assert rows["contracts"] == "a:b:c"
    claim_id = result.stdout.split()[1]
    status = Cli(repo)("claim", "status", claim_id).stdout
    assert _rows(status)["objective"] == objective and _rows(status)["contracts"] == "a:b:c"
    listing = Cli(repo)("claim", "list").stdout
    assert "bot:b:" in listing
    assert "\U0001f604" not in status + listing and "\U0001f171" not in status + listing
