"""``detente resource``: acquire, renew, release, list, show, next and declare through the
client (in-process and over HTTP)."""

from __future__ import annotations

import pytest
from cli_harness import Cli

from detente.cli import resources as resources_cli
from detente.clock import FakeClock


def test_acquire_prints_the_fencing_token_and_a_full_resource_exits_8_resource_busy(
    cli: Cli,
) -> None:
    code, body = cli.json("resource", "acquire", "build", "--capacity", "2", "--note", "ci")
    assert code == 0, body
    assert body["grant"]["fencingToken"] == 1 and body["grant"]["note"] == "ci"
    assert cli.json("resource", "acquire", "build")[0] == 0
    code, problem = cli.json("resource", "acquire", "build")
    assert code == 8 and problem["code"] == "resource_busy"
    text = cli("resource", "acquire", "build").stderr
    assert "every slot of build is held (2 of 2)" in text and "--wait" in text


def test_renew_reads_the_lease_revision_and_release_frees_the_slot(
    cli: Cli, clock: FakeClock
) -> None:
    token = cli.json("resource", "acquire", "db:test", "--ttl", "60")[1]["grant"]["fencingToken"]
    clock.advance(50)
    code, body = cli.json("resource", "renew", "db:test", "--token", str(token), "--ttl", "60")
    assert code == 0, body
    assert body["grant"]["leaseRevision"] == 2
    clock.advance(50)  # past the first deadline, within the renewed one
    [held] = cli.json("resource", "show", "db:test")[1]["resource"]["holders"]
    assert held["fencingToken"] == token
    code, body = cli.json("resource", "release", "db:test", "--token", str(token))
    assert code == 0 and body["resource"]["holders"] == []
    code, problem = cli.json("resource", "release", "db:test", "--token", str(token))
    assert code == 8 and problem["code"] == "stale_fencing_token"


def test_a_renewal_after_expiry_exits_5_lease_expired(cli: Cli, clock: FakeClock) -> None:
    token = cli.json("resource", "acquire", "port:5432", "--ttl", "30")[1]["grant"]["fencingToken"]
    clock.advance(31)
    code, problem = cli.json(
        "resource", "renew", "port:5432", "--token", str(token), "--lease-revision", "1"
    )
    assert code == 5 and problem["code"] == "lease_expired"


def test_wait_leaves_the_line_when_no_slot_frees_in_time(cli: Cli) -> None:
    cli.json("resource", "acquire", "deploy:staging")
    code, problem = cli.json("resource", "acquire", "deploy:staging", "--wait", "--timeout", "0.2")
    assert code == 8 and problem["code"] == "resource_busy"
    assert cli.json("resource", "show", "deploy:staging")[1]["resource"]["waiters"] == []


def test_next_prints_each_migration_number_once(cli: Cli) -> None:
    assert cli("resource", "next", "migrations", "--at-least", "42").stdout.strip() == "0042"
    code, body = cli.json("resource", "next", "migrations")
    assert code == 0 and (body["number"], body["label"]) == (43, "0043")


def test_declare_changes_the_capacity_and_list_shows_every_resource(cli: Cli) -> None:
    code, body = cli.json("resource", "declare", "build", "--capacity", "2")
    assert code == 0, body
    assert body["resource"]["capacity"] == 2
    code, body = cli.json("resource", "declare", "build", "--capacity", "3")
    assert code == 0 and body["resource"]["capacity"] == 3
    cli.json("resource", "acquire", "build")
    text = cli("resource", "list").stdout
    assert "build: 1 of 3 held, 0 waiting" in text and "token 1" in text


def test_bad_input_exits_2_naming_the_field(cli: Cli) -> None:
    code, problem = cli.json("resource", "acquire", "Build")
    assert code == 2 and problem["field"] == "name"
    code, problem = cli.json("resource", "acquire", "build", "--ttl", "0")
    assert code == 2 and problem["field"] == "ttlSeconds"
    assert cli.json("resource", "list")[1]["resources"] == []


def test_a_negative_or_infinite_wait_timeout_exits_2_and_records_nothing(cli: Cli) -> None:
    cli.json("resource", "acquire", "deploy:prod")
    before = cli.json("resource", "show", "deploy:prod")[1]["resource"]["revision"]
    for bad in ("-1", "inf", "nan"):
        code, problem = cli.json("resource", "acquire", "deploy:prod", "--wait", "--timeout", bad)
        assert code == 2 and problem["field"] == "timeout", (bad, problem)
    assert cli.json("resource", "show", "deploy:prod")[1]["resource"]["revision"] == before


def test_an_interrupted_wait_leaves_the_line(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.json("resource", "acquire", "deploy:qa")

    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the command waits between two reads

    monkeypatch.setattr(resources_cli.time, "sleep", interrupted)
    result = cli("resource", "acquire", "deploy:qa", "--wait", "--timeout", "60")
    assert result.exit_code != 0
    assert cli.json("resource", "show", "deploy:qa")[1]["resource"]["waiters"] == []
