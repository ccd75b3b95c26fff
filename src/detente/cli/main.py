"""The ``detente`` command line.

Commands talk to a detente server (``--server URL`` / ``$DETENTE_URL``, or one found on
``http://127.0.0.1:7420`` that serves the current repository) or, when there is none, call
the service in-process on the repository's SQLite store (*local mode*; force it with
``--local`` / ``$DETENTE_LOCAL=1``). Either way the records, errors and exit codes are the
same; ``--json`` output names the ``mode``.

Exit codes (one table, ``render.EXIT_CODES``)::

    0 ok                         5 lease_expired
    1 unexpected (or vcs_error)  6 overlap: claim opened but negotiating
    2 usage / validation_error   7 invalid_transition
    3 not_found                  8 other conflict (branch_in_use, stale_base, ...)
    4 revision_conflict          9 server or store unavailable

Start-up stays fast (agents run a command on every tool use):

- ``detente --help`` is printed from :data:`COMMANDS` without importing typer or any
  command module (:mod:`detente.cli.root_help`);
- ``detente hook-harness HARNESS EVENT`` (the agent harness hooks ``detente init``
  writes, :mod:`detente.harness`) skips the parser: it runs before every edit;
- ``detente claim status ID --json`` and ``detente claim list --json``, the reads agents
  run on every tool use, and ``detente claim open ... --json`` with only its own options,
  skip the parser too (:mod:`detente.cli.fast_reads`);
- every other command imports typer, the root group and only its own command module
  (:mod:`detente.cli.lazy_group`, registrars in :mod:`detente.cli.registry`); httpx, rich,
  pydantic, FastAPI and uvicorn are imported inside the commands that need them.

The global options (``--server``, ``--repo``, ``--local``, ``--json``, ``--verbose``) may
be written before or after the command.

To add a top-level command: a registrar in :mod:`detente.cli.registry` and one line in
:data:`COMMANDS` (the test suite checks the line's help against the command's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    import typer

__all__ = ["COMMANDS", "main"]  # and ``app``, built on first access (``__getattr__``)

#: Every top-level command in help order: ``name -> (one-line help, "module:registrar")``.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "Set this repository up for agents: git hooks, MCP entries, harness hooks, AGENTS.md.",
        "detente.cli.registry:init",
    ),
    "claim": (
        "Claim paths before editing; keep the lease alive; release with evidence.",
        "detente.cli.registry:claim",
    ),
    "integrate": (
        "Integrate a ready_for_review claim with the evidence the server accepted.",
        "detente.cli.registry:integrate",
    ),
    "meeting": (
        "Meeting rooms: negotiate a blocking overlap with a typed resolution.",
        "detente.cli.registry:meeting",
    ),
    "memory": (
        "Active memory files (AGENTS.md, CLAUDE.md, ...): sections, appends, generated regions.",
        "detente.cli.registry:memory",
    ),
    "patch": (
        "The patch queue: publish, list and apply patch artifacts.",
        "detente.cli.registry:patch",
    ),
    "deploy": (
        "Deploy a claim's commit to ENV by compare-and-swap (exit 8: stale_base or policy).",
        "detente.cli.registry:deploy",
    ),
    "resource": (
        "Shared resources (build slots, test databases, ports, migration numbers): "
        "counted leases with fencing tokens.",
        "detente.cli.registry:resource",
    ),
    "reconcile": (
        "Where two intents meet: the symbols both touch and the blast radius between them.",
        "detente.cli.registry:index",
    ),
    "symbols": (
        "The symbols a claim's worktree (or branch) touches now, and those outside its scope.",
        "detente.cli.registry:index",
    ),
    "search": (
        "Claims and memory sections ranked by relevance, each claim with its overlaps.",
        "detente.cli.registry:index",
    ),
    "events": ("The append-only event log.", "detente.cli.registry:events"),
    "audit": ("Verify the hash chain and the projections.", "detente.cli.registry:audit"),
    "hooks": ("Git hooks that enforce claims.", "detente.cli.registry:hooks"),
    "config": (
        "The project configuration (detente.toml at the repository root).",
        "detente.cli.registry:config",
    ),
    "agents": (
        "Agent sessions: who works in this repository now, and on what (advisory).",
        "detente.cli.registry:agents",
    ),
    "principal": (
        "Agent keys for signed requests (detente serve --auth keys).",
        "detente.cli.registry:principal",
    ),
    "serve": (
        "Run the detente server (HTTP API, event stream, live dashboard at /) until interrupted.",
        "detente.cli.registry:serve",
    ),
    "dashboard": (
        "Open the live dashboard of a running server (detente serve) in the browser.",
        "detente.cli.registry:dashboard",
    ),
    "mcp": (
        "Serve detente's tools and resources to an MCP client over stdio.",
        "detente.cli.registry:mcp",
    ),
    "demo": (
        "Run the end-to-end story on a throwaway clone: three agents, one overlap, one expiry.",
        "detente.cli.registry:demo",
    ),
}

_HELP = ("--help", "-h")
#: Commands that serve until stopped: they load the embedding model in the background.
_LONG_RUNNING = frozenset({"serve", "mcp", "dashboard", "demo"})
_APP: list[typer.Typer] = []


def _app() -> typer.Typer:
    """The Typer app (built on first use)."""
    if not _APP:
        from detente.cli.lazy_group import build_app

        _APP.append(build_app(COMMANDS))
    return _APP[0]


def __getattr__(name: str) -> Any:
    """``app``: the Typer app, built when first imported (``from detente.cli.main import
    app``), so that importing :func:`main` costs nothing."""
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _print_root_help() -> None:
    import sys

    from detente.cli.render import EXIT_CODES_HELP
    from detente.cli.root_help import root_help

    sys.stdout.write(root_help([(n, h) for n, (h, _) in COMMANDS.items()], EXIT_CODES_HELP))


def _leave_at_once(code: int) -> NoReturn:
    """End a harness hook call with ``code`` once its answer is out, without the
    interpreter's teardown.

    The call has already closed what it opened (its store in local mode, its connection)
    and written its answer; finalizing every module it imported is about a tenth of a
    local-mode call (#31, ``bench/harness_hooks.py``). Its output is flushed and a
    warning it logged is handed to the handlers first.
    """
    import contextlib
    import os
    import sys

    if "logging" in sys.modules:
        import logging

        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        # a pipe the harness closed: nothing left to say
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def main() -> None:
    """Console entry point (``detente``).

    Usage errors (a missing option, a value of the wrong type) are click's, raised before
    any command runs; with ``--json`` they are still one problem document on stdout, with
    exit code 2, as every other error is.
    """
    import sys

    # Optional imports of httpx and httpcore that a detente process never uses, each worth
    # tens of milliseconds per call: httpx's own command line (click, rich, pygments) and
    # trio (detente runs on asyncio). A None entry makes importing them fail, and both
    # libraries fall back as they do when the package is not installed.
    for unused in ("httpx._main", "trio"):
        sys.modules.setdefault(unused, None)  # type: ignore[arg-type]
    args = sys.argv[1:]
    if not _LONG_RUNNING.intersection(args):
        # One command and exit: no background model load for a semantic mode it would not
        # live to use (see detente.service.search.similarity_now).
        import os

        os.environ.setdefault("DETENTE_BACKGROUND_MODEL", "0")
    if len(args) == 1 and args[0] in _HELP:
        _print_root_help()
        return
    if args and args[0] == "hook-harness":  # an agent harness's hook: no parser, never help
        import gc

        # One short call per edit: no cyclic garbage collection (a few milliseconds of
        # passes over the objects its imports create); what it allocates goes at exit.
        gc.disable()
        from detente.harness.command import main as hook_main

        _leave_at_once(hook_main(args[1:]))
    if args and args[0] in ("--version", "-V"):
        from detente import __version__

        if "--json" in args:
            sys.stdout.write(f'{{"version":"{__version__}"}}\n')
        else:
            sys.stdout.write(f"detente {__version__}\n")
        return
    if "--json" in args:  # claim status / list / open: no parser needed
        from detente.cli.fast_reads import answer, finish

        fast = answer(args)
        if fast is not None:
            finish(fast)
    app = _app()
    if "--json" not in args:
        app(prog_name="detente")
        return
    import json

    import typer

    try:
        # Without standalone mode click returns a command's exit code instead of exiting.
        code = app(prog_name="detente", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except Exception as exc:  # typer's vendored click UsageError family
        format_message = getattr(exc, "format_message", None)
        if format_message is None or getattr(exc, "exit_code", None) != 2:
            raise
        problem = {"code": "validation_error", "detail": format_message(), "exitCode": 2}
        param = getattr(exc, "param", None)
        if param is not None:  # the option as typed (--ttl) or the argument (CLAIM_ID)
            opts = [o for o in getattr(param, "opts", []) if o.startswith("--")]
            problem["field"] = opts[0] if opts else str(param.name).upper()
        elif getattr(exc, "option_name", None):  # an unknown option
            problem["field"] = str(getattr(exc, "option_name", ""))
        print(json.dumps(problem, separators=(",", ":")))
        sys.exit(2)
