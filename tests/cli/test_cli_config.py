"""``detente config show``: the effective configuration and where each value came from."""

from __future__ import annotations

from pathlib import Path

from cli_harness import Cli


def test_config_show_lists_every_value_with_its_source(repo: Path) -> None:
    (repo / "detente.toml").write_text(
        "[policy]\nmeeting-deadline-seconds = 600\nmax-ttl-seconds = 3600\n", encoding="utf-8"
    )
    code, body = Cli(repo).json("config", "show", "--max-ttl", "120")
    assert code == 0, body
    settings = {s["key"]: (s["value"], s["source"]) for s in body["settings"]}
    assert settings["policy.meeting-deadline-seconds"] == (600, "detente.toml")
    assert settings["policy.max-ttl-seconds"] == (120, "--max-ttl")
    assert settings["policy.takeover-grace-seconds"] == (30, "default")
    assert settings["roles.claim"] == (["*"], "default")
    assert settings["limits.claim-open.per-principal"] == (None, "default")
    assert body["file"] == str(repo / "detente.toml")


def test_config_show_as_text_names_the_file_and_each_source(repo: Path) -> None:
    (repo / "detente.toml").write_text('[generated]\npatterns = ["gen/"]\n', encoding="utf-8")
    out = Cli(repo)("config", "show").stdout
    assert f"read {repo / 'detente.toml'}" in out
    line = next(x for x in out.splitlines() if x.startswith("generated.patterns"))
    assert line.split() == ["generated.patterns", "detente.toml", "gen/**"]
    limit = next(x for x in out.splitlines() if "claim-open.per-session" in x)
    assert limit.split() == ["limits.claim-open.per-session", "default", "unlimited"]


def test_an_invalid_config_file_is_a_usage_error_naming_the_key(repo: Path) -> None:
    (repo / "detente.toml").write_text("[policy]\nmax-ttl-seconds = -5\n", encoding="utf-8")
    code, problem = Cli(repo).json("config", "show")
    assert code == 2
    assert problem["code"] == "validation_error"
    assert problem["field"] == "policy.max-ttl-seconds"
    assert "got an integer -5" in problem["detail"]


def test_the_local_mode_enforces_the_ttl_bound_of_the_config_file(repo: Path) -> None:
    (repo / "detente.toml").write_text("[policy]\nmax-ttl-seconds = 60\n", encoding="utf-8")
    cli = Cli(repo)
    code, problem = cli.json("claim", "open", "-o", "x", "-p", "docs/**", "--ttl", "120")
    assert code == 2 and "between 1 and 60" in problem["detail"], problem
    code, body = cli.json("claim", "open", "-o", "x", "-p", "docs/**", "--ttl", "60")
    assert code == 0 and body["claim"]["lease"]["ttlSeconds"] == 60, body
