"""detente.toml: read with tomllib, every key validated, flags win, sources recorded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from detente.config import effective, load_config
from detente.domain.policy import DEFAULT_POLICY
from detente.errors import ValidationError
from detente.runtime import build_service, load_project_config

FULL = """
[policy]
meeting-deadline-seconds = 600
takeover-grace-seconds = 0
min-ttl-seconds = 5
max-ttl-seconds = 3600
takeover-quorum = 2
approval-gates = ["migrations"]
migration-patterns = ["db/migrations/", "./schema.sql"]
max-targets = 50
max-text = 500

[generated]
patterns = ["gen/", "**/*.pb.go"]

[roles]
claim = ["*"]
integrate = ["group:maintainers", "alice"]
deploy = ["alice"]

[limits.claim-open]
per-principal = 60
per-session = 20

[limits.agent-register]
window-seconds = 30
"""


def _write(root: Path, text: str) -> Path:
    path = root / "detente.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(root: Path, text: str) -> ValidationError:
    _write(root, text)
    with pytest.raises(ValidationError) as caught:
        load_config(root)
    return caught.value


def test_without_a_file_every_value_is_the_default(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.policy == DEFAULT_POLICY
    assert config.file is None
    assert config.generated == ()
    assert config.roles.members("claim") == ("*",)
    assert config.roles.members("deploy") == ()
    assert config.limits["claim-open"].per_principal is None
    assert {config.source(k) for k in effective(config)} == {"default"}


def test_a_full_file_sets_the_policy_patterns_roles_and_limits(tmp_path: Path) -> None:
    path = _write(tmp_path, FULL)
    config = load_config(tmp_path)
    policy = config.policy
    assert (policy.meeting_deadline_seconds, policy.takeover_grace_seconds) == (600, 0)
    assert (policy.min_ttl_seconds, policy.max_ttl_seconds) == (5, 3600)
    assert (policy.takeover_quorum, policy.max_targets, policy.max_text) == (2, 50, 500)
    assert policy.approval_gates == ("migrations",)
    assert policy.migration_patterns == ("db/migrations/**", "schema.sql")  # canonical
    assert config.generated == ("gen/**", "**/*.pb.go")
    assert config.roles.members("integrate") == ("group:maintainers", "alice")
    assert config.roles.allows("integrate", "bob", groups=["maintainers"])
    assert not config.roles.allows("deploy", "bob", groups=["maintainers"])
    assert config.roles.allows("claim", "anyone")
    assert config.limits["claim-open"].per_principal == 60
    assert config.limits["claim-open"].per_session == 20
    assert config.limits["agent-register"].window_seconds == 30
    assert config.file == path
    assert config.source("policy.max-ttl-seconds") == "detente.toml"
    assert config.source("roles.admin") == "default"


def test_a_flag_overrides_the_file_and_is_named_as_the_source(tmp_path: Path) -> None:
    _write(tmp_path, FULL)
    config = load_config(
        tmp_path, overrides={"policy.meeting-deadline-seconds": (120, "--meeting-deadline")}
    )
    assert config.policy.meeting_deadline_seconds == 120
    assert config.source("policy.meeting-deadline-seconds") == "--meeting-deadline"
    assert config.source("policy.takeover-grace-seconds") == "detente.toml"


def test_an_explicit_policy_file_is_read_instead_and_must_exist(tmp_path: Path) -> None:
    _write(tmp_path, "[policy]\nmax-text = 10\n")
    other = tmp_path / "team.toml"
    other.write_text("[policy]\nmax-text = 20\n", encoding="utf-8")
    config = load_config(tmp_path, file=other)
    assert config.policy.max_text == 20
    assert config.source("policy.max-text") == str(other)
    with pytest.raises(ValidationError, match="no such configuration file"):
        load_config(tmp_path, file=tmp_path / "missing.toml")


def test_an_unknown_key_names_the_file_the_table_and_the_keys_it_accepts(tmp_path: Path) -> None:
    error = _error(tmp_path, "[policy]\nmeeting-deadline = 600\n")
    assert error.field == "policy.meeting-deadline"
    assert "detente.toml" in error.detail and "'meeting-deadline'" in error.detail
    assert "meeting-deadline-seconds" in error.detail  # what was probably meant
    assert error.extra["file"] == str(tmp_path / "detente.toml")


def test_an_unknown_table_or_action_is_refused(tmp_path: Path) -> None:
    assert "unknown table [polcy]" in _error(tmp_path, "[polcy]\nx = 1\n").detail
    error = _error(tmp_path, "[limits.claim-close]\nper-session = 1\n")
    assert "claim-open, agent-register" in error.detail


def test_a_value_of_the_wrong_type_says_what_was_expected_and_what_came(tmp_path: Path) -> None:
    error = _error(tmp_path, '[policy]\nmax-ttl-seconds = "1h"\n')
    assert error.field == "policy.max-ttl-seconds"
    assert "must be an integer from 1 to" in error.detail
    assert "got a string '1h'" in error.detail
    error = _error(tmp_path, "[policy]\ntakeover-quorum = true\n")
    assert "got a boolean True" in error.detail  # TOML's true is not the integer 1
    error = _error(tmp_path, "policy = 3\n")
    assert "must be a table" in error.detail


def test_an_integer_out_of_range_is_refused(tmp_path: Path) -> None:
    error = _error(tmp_path, "[policy]\nmeeting-deadline-seconds = 0\n")
    assert "from 1 to 2592000" in error.detail and "got an integer 0" in error.detail


def test_bad_patterns_gate_names_and_role_entries_are_refused(tmp_path: Path) -> None:
    assert "/etc" in _error(tmp_path, '[generated]\npatterns = ["/etc/**"]\n').detail
    error = _error(tmp_path, '[policy]\napproval-gates = ["contracts", "tests"]\n')
    assert "unknown: tests" in error.detail
    error = _error(tmp_path, '[policy]\napproval-gates = ["memory", "memory"]\n')
    assert "repeated" in error.detail
    error = _error(tmp_path, '[roles]\ndeploy = ["two words"]\n')
    assert "'two words'" in error.detail
    assert "group:" in _error(tmp_path, '[roles]\nadmin = ["group:"]\n').detail


def test_a_file_that_is_not_toml_reports_the_parser_position(tmp_path: Path) -> None:
    error = _error(tmp_path, "[policy\nmax-text = 1\n")
    assert "not valid TOML" in error.detail and "line 1" in error.detail


def test_a_minimum_ttl_above_the_maximum_names_both_sources(tmp_path: Path) -> None:
    _write(tmp_path, "[policy]\nmin-ttl-seconds = 100\n")
    with pytest.raises(ValidationError) as caught:
        load_config(tmp_path, overrides={"policy.max-ttl-seconds": (50, "--max-ttl")})
    detail = caught.value.detail
    assert "min-ttl-seconds from detente.toml" in detail
    assert "max-ttl-seconds from --max-ttl" in detail


def test_a_bad_flag_value_names_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        load_config(tmp_path, overrides={"policy.takeover-grace-seconds": (-1, "--takeover-grace")})
    assert caught.value.detail.startswith("--takeover-grace must be an integer from 0")


def _repo(root: Path) -> Path:
    root.mkdir()
    run = {"cwd": root, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)  # type: ignore[call-overload]
    (root / "README.md").write_text("# r\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "commit", "-q", "-m", "init"], **run)  # type: ignore[call-overload]
    return root


def test_every_worktree_reads_the_main_worktrees_file(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    _write(main, "[policy]\nmeeting-deadline-seconds = 60\n")
    linked = tmp_path / "linked"
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "topic", str(linked)], cwd=main, check=True
    )
    _write(linked, "[policy]\nmeeting-deadline-seconds = 9999\n")  # a branch's own copy
    assert load_project_config(linked).policy.meeting_deadline_seconds == 60
    service = build_service([linked], store_url="memory://")
    try:
        assert service.policy.meeting_deadline_seconds == 60
    finally:
        service.store.close()


def test_the_service_refuses_to_start_on_an_invalid_file(tmp_path: Path) -> None:
    main = _repo(tmp_path / "main")
    _write(main, "[policy]\nmax-ttl = 5\n")
    with pytest.raises(ValidationError, match="unknown key 'max-ttl'"):
        build_service([main], store_url="memory://")


def test_local_roles_are_none_by_default_and_named_roles_when_granted(tmp_path: Path) -> None:
    assert load_config(tmp_path).local_roles == ()
    _write(tmp_path, '[local]\nroles = ["claim", "integrate"]\n')
    config = load_config(tmp_path)
    assert config.local_roles == ("claim", "integrate")
    assert effective(config)["local.roles"] == ["claim", "integrate"]
    assert config.source("local.roles") == "detente.toml"


def test_local_roles_outside_the_role_names_or_other_local_keys_are_refused(
    tmp_path: Path,
) -> None:
    error = _error(tmp_path, '[local]\nroles = ["root"]\n')
    assert error.field == "local.roles" and "unknown: root" in error.detail
    assert "repeated names" in _error(tmp_path, '[local]\nroles = ["claim", "claim"]\n').detail
    error = _error(tmp_path, '[local]\nuser = "me"\n')
    assert error.field == "local.user" and "expected one of: roles" in error.detail
