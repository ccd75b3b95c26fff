"""Start-up: what a command imports, the root help, and global options after the command."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import typer
from cli_harness import Cli
from typer.testing import CliRunner

from api.conftest import running
from detente import __version__
from detente.cli.lazy_group import hoist_global_options
from detente.cli.main import COMMANDS, app
from detente.cli.render import EXIT_CODES_HELP
from detente.cli.root_help import GLOBAL_OPTIONS, root_help
from detente.runtime import build_service

_HEAVY = (
    "typer",
    "rich",
    "pydantic",
    "fastapi",
    "starlette",
    "uvicorn",
    "httpx",
    "onnxruntime",
    "numpy",
    "dulwich",
)
#: Modules a local read does not need, each costing it a few percent (the API records
#: build hundreds of annotations; logging comes with the thread pool; the audit's checks).
_UNNEEDED = (
    "typing_extensions",
    "detente.operations.wire",
    "logging",
    "concurrent.futures",
    "detente.domain.invariants",
)

# Runs the console entry point, then names the heavy packages the process imported and
# how it ended (the fast reads end with os._exit: no interpreter teardown).
_PROBE = """
import json, os, sys
from detente.cli.main import main

def report(code, how):
    heavy = sorted({m.split(".")[0] for m, v in sys.modules.items() if v} & set(%r))
    unneeded = sorted(set(sys.modules) & set(%r))
    print(json.dumps({"code": code, "heavy": heavy, "exit": how, "unneeded": unneeded}),
          file=sys.stderr)

exit_now = os._exit
def reported_exit(code):
    report(code, "os._exit")
    sys.stderr.flush()
    exit_now(code)

os._exit = reported_exit
sys.argv = ["detente", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
report(code, "sys.exit")
"""


def _probe(cwd: Path, *args: str) -> tuple[dict[str, object], str]:
    env = {k: v for k, v in os.environ.items() if k != "DETENTE_URL"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE % (_HEAVY, _UNNEEDED), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**env, "DETENTE_LOCAL": "1"},
        check=False,
        timeout=120,
    )
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return report, done.stdout


def test_root_help_imports_neither_typer_nor_rich_nor_any_command(tmp_path: Path) -> None:
    report, out = _probe(tmp_path, "--help")

    assert report == {"code": 0, "heavy": [], "exit": "sys.exit", "unneeded": []}
    assert out.startswith("Usage: detente [OPTIONS] COMMAND")
    assert all(f"  {name} " in out for name in COMMANDS)


def test_claim_status_in_local_mode_imports_no_web_stack_no_pydantic_and_no_model(
    cli: Cli, repo: Path
) -> None:
    claim = cli.open("docs/**")["claim"]

    report, out = _probe(repo, "claim", "status", claim["id"], "--json")

    assert report["code"] == 0
    assert json.loads(out)["claim"]["id"] == claim["id"]
    assert report["heavy"] == []  # not even the command-line parser (fast_reads)


def test_claim_open_in_local_mode_does_not_load_the_git_object_library(repo: Path) -> None:
    args = ["claim", "open", "--objective", "docs", "--agent", "alice", "--path", "docs/**"]

    report, out = _probe(repo, *args, "--memory", "docs/guide.md", "--json")

    assert report["code"] == 0, out
    assert json.loads(out)["claim"]["memoryImpacts"], out
    assert "dulwich" not in report["heavy"]  # memory commits import it, lazily


def test_the_reads_answered_without_the_parser_print_what_the_parsed_commands_print(
    cli: Cli, repo: Path
) -> None:
    claim = cli.open("docs/**")["claim"]

    for args in (["claim", "status", claim["id"], "--json"], ["--json", "claim", "list"]):
        report, out = _probe(repo, *args)
        # The same read with a global option the fast path does not take: parsed.
        parsed, parsed_out = _probe(repo, "--local", *args)
        fast, slow = json.loads(out), json.loads(parsed_out)
        for document in (fast, slow):
            document.get("lease", {}).pop("timer", None)  # "59m59s left": read at its time
        assert report == {"code": 0, "heavy": [], "exit": "os._exit", "unneeded": []}, args
        assert (parsed["code"], parsed["heavy"], parsed["exit"]) == (0, ["typer"], "sys.exit")
        assert fast == slow, args


def test_a_read_answered_without_the_parser_that_fails_exits_with_its_problem(
    cli: Cli, repo: Path
) -> None:
    cli.open("docs/**")

    report, out = _probe(repo, "claim", "status", "clm_nosuchclaim", "--json")

    assert report == {"code": 3, "heavy": [], "exit": "os._exit", "unneeded": []}
    assert json.loads(out)["code"] == "not_found"


def test_any_other_option_goes_through_the_parser(cli: Cli, repo: Path) -> None:
    claim = cli.open("docs/**")["claim"]

    report, out = _probe(repo, "claim", "status", claim["id"], "--work", "--json")
    missing, _ = _probe(repo, "claim", "status", "--json")

    assert report["heavy"] == ["typer"] and report["code"] == 0
    assert json.loads(out)["work"] is not None
    assert missing["code"] == 2 and missing["heavy"] == ["typer"]


def test_claim_open_with_its_own_options_is_answered_without_the_parser(repo: Path) -> None:
    common = ["--no-worktree", "--ttl", "600", "--json"]
    fast_report, fast_out = _probe(
        repo, "claim", "open", "-o", "fast", "-p", "a/**", "--module=pkg.a", *common
    )
    # A global option the fast path does not take: the same command, parsed.
    parsed_report, parsed_out = _probe(
        repo, "--local", "claim", "open", "-o", "parsed", "-p", "b/**", "--module=pkg.b", *common
    )
    fast, parsed = json.loads(fast_out), json.loads(parsed_out)

    assert fast_report == {"code": 0, "heavy": [], "exit": "os._exit", "unneeded": []}
    assert (parsed_report["code"], parsed_report["heavy"]) == (0, ["typer"])
    assert fast.keys() == parsed.keys() and fast["claim"].keys() == parsed["claim"].keys()
    for document, side in ((fast, "a"), (parsed, "b")):
        claim = document["claim"]
        assert (claim["paths"], claim["modules"]) == ([f"{side}/**"], [f"pkg.{side}"])
        assert (claim["status"], claim["lease"]["ttlSeconds"], document["worktree"]) == (
            "active",
            600,
            None,
        )


def test_claim_open_forms_the_fast_path_does_not_read_go_through_the_parser(
    repo: Path,
) -> None:
    missing, missing_out = _probe(repo, "claim", "open", "-p", "a/**", "--json")
    short_eq, _ = _probe(repo, "claim", "open", "-o=x", "-p", "a/**", "--no-worktree", "--json")
    twice, _ = _probe(repo, "claim", "open", "-o", "x", "-o", "y", "-p", "c/**", "--json")

    assert (missing["code"], missing["heavy"]) == (2, ["typer"])
    assert json.loads(missing_out)["field"] == "--objective"
    assert short_eq["heavy"] == ["typer"] and twice["heavy"] == ["typer"]


def test_the_table_help_of_every_command_is_the_commands_own_first_line() -> None:
    group = typer.main.get_group(app)

    for name, (line, _) in COMMANDS.items():
        command = group.get_command(typer.Context(group), name)
        assert command is not None, name
        first = " ".join((command.help or "").strip().split("\n\n")[0].split())
        assert first.replace("`", "") == line, name  # as the Markdown help renders it


def test_help_with_other_options_prints_the_same_text_as_the_fast_path() -> None:
    result = CliRunner().invoke(app, ["--local", "--help"])

    rows = [(name, line) for name, (line, _) in COMMANDS.items()]
    assert result.exit_code == 0
    assert result.stdout == root_help(rows, EXIT_CODES_HELP)


def test_the_help_lists_the_options_the_root_callback_declares() -> None:
    group = typer.main.get_group(app)
    declared = {opt for param in group.params for opt in (*param.opts, *param.secondary_opts)}

    listed = {flag for option in GLOBAL_OPTIONS for flag in option.flags}
    assert declared | {"--help", "-h"} == listed


def test_global_options_after_the_command_are_accepted(cli: Cli, repo: Path) -> None:
    claim = cli.open("docs/**")["claim"]
    runner = CliRunner()

    after = runner.invoke(app, ["claim", "status", claim["id"], "--repo", str(repo), "--json"])
    between = runner.invoke(app, ["claim", "--json", "status", claim["id"], f"--repo={repo}"])

    assert after.exit_code == 0, after.stdout
    assert json.loads(after.stdout)["claim"]["id"] == claim["id"]
    assert between.exit_code == 0, between.stdout
    assert json.loads(between.stdout)["claim"]["id"] == claim["id"]


def test_a_commands_own_option_of_a_global_name_stays_with_the_command() -> None:
    group = typer.main.get_group(app)
    ctx = typer.Context(group)

    moved = hoist_global_options(group, ctx, ["claim", "list", "--repo", "web", "--local"])
    kept_value = hoist_global_options(
        group, ctx, ["claim", "open", "--objective", "--json", "--path", "a", "-v"]
    )
    after_dashdash = hoist_global_options(group, ctx, ["claim", "status", "--", "--json"])

    assert moved == ["--local", "claim", "list", "--repo", "web"]
    assert kept_value == ["-v", "claim", "open", "--objective", "--json", "--path", "a"]
    assert after_dashdash == ["claim", "status", "--", "--json"]


def test_an_unknown_command_is_a_usage_error_with_a_suggestion(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["--repo", str(tmp_path), "clam", "--json"])

    assert result.exit_code == 2
    assert "claim" in result.output


def test_version_is_printed_fast_and_with_other_global_options(tmp_path: Path) -> None:
    report, out = _probe(tmp_path, "--version")
    assert (report["code"], report["heavy"], report["exit"]) == (0, [], "sys.exit")
    assert out.strip() == f"detente {__version__}"
    result = CliRunner().invoke(app, ["--local", "--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"detente {__version__}"


# Runs one read through the console entry point, then names the packages it imported.
_MODULES = """
import json, os, sys
from detente.cli.main import main

exit_now = os._exit
def reported_exit(code):
    names = ("httpx", "click", "rich", "pygments", "typer", "trio")
    loaded = {m.split(".")[0] for m, module in sys.modules.items() if module}
    print(json.dumps(sorted(loaded & set(names))),
          file=sys.stderr)
    sys.stderr.flush()
    exit_now(code)

os._exit = reported_exit
sys.argv = ["detente", *sys.argv[1:]]
main()
"""


def test_a_read_from_a_server_imports_httpx_without_its_command_line_or_the_parser(
    repo: Path,
) -> None:
    claim = Cli(repo).open("docs/**")["claim"]  # local mode, on the store the server opens
    service = build_service([repo])
    try:
        with running(service) as base:
            env = {k: v for k, v in os.environ.items() if k != "DETENTE_LOCAL"}
            done = subprocess.run(
                [sys.executable, "-c", _MODULES, "claim", "status", claim["id"], "--json"],
                cwd=repo,
                capture_output=True,
                text=True,
                env={**env, "DETENTE_URL": base},
                check=False,
                timeout=120,
            )
    finally:
        service.store.close()

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["claim"]["id"] == claim["id"]
    assert json.loads(done.stderr.strip().splitlines()[-1]) == ["httpx"]


def test_with_no_server_listening_the_probe_falls_back_to_local_mode_without_httpx(
    repo: Path,
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed again: nobody listens there
    script = (
        "import sys; from pathlib import Path; from detente.client.connect import connect; "
        f"c = connect(None, Path('.'), local=False, probe_url='http://127.0.0.1:{port}'); "
        "print(c.mode, 'httpx' in sys.modules); c.close()"
    )

    done = subprocess.run(
        [sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["local", "False"]
