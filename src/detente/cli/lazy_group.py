"""The root command: subcommands imported on first use, global options anywhere.

- :class:`LazyCommands` is the root group's command mapping. It knows every top-level
  command's name from :data:`detente.cli.main.COMMANDS` and imports a command's module
  (running its registrar, :mod:`detente.cli.registry`) only when that command is looked
  up, so ``detente claim status`` never imports the meeting, memory or server commands.
- :class:`RootGroup` prints :func:`~detente.cli.root_help.root_help` for ``--help`` and
  moves the global options (``--server``, ``--repo``, ``--local``, ``--json``,
  ``--verbose``) written after the command in front of it (:func:`hoist_global_options`),
  unless the command has an option of that name itself.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from detente.cli.context import JsonFlag, Settings
from detente.cli.root_help import GLOBAL_OPTIONS, root_help

__all__ = ["LazyCommands", "RootGroup", "build_app", "hoist_global_options"]

#: ``name -> (one-line help, "module:registrar")`` (see :data:`detente.cli.main.COMMANDS`).
Table = dict[str, tuple[str, str]]

_HOISTED = {flag for option in GLOBAL_OPTIONS for flag in option.flags} - {"--help", "-h"}
_TAKES_VALUE = {flag for option in GLOBAL_OPTIONS if option.metavar for flag in option.flags}


@functools.cache
def _registered(registrar: str) -> dict[str, Any]:
    """The click commands a registrar adds, by name (built once per process)."""
    module, _, function = registrar.partition(":")
    register: Callable[[typer.Typer], None] = getattr(importlib.import_module(module), function)
    scratch = typer.Typer()
    register(scratch)
    group = typer.main.get_group(scratch)
    assert isinstance(group, TyperGroup)
    return dict(group.commands)


class LazyCommands(MutableMapping[str, Any]):
    """Commands by name: the eagerly added ones, then the table's, imported on lookup.

    Args:
        table: the lazily imported commands (``name -> (help, "module:registrar")``).
        eager: commands added the usual way (``app.command``); they win over the table.
    """

    def __init__(self, table: Table, eager: MutableMapping[str, Any]) -> None:
        self.table = table
        self.eager = dict(eager)

    def __getitem__(self, name: str) -> Any:
        if name in self.eager:
            return self.eager[name]
        if name not in self.table:
            raise KeyError(name)
        return _registered(self.table[name][1])[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.eager[name] = command

    def __delitem__(self, name: str) -> None:
        del self.eager[name]

    def __iter__(self) -> Iterator[str]:
        yield from self.table
        yield from (name for name in self.eager if name not in self.table)

    def __len__(self) -> int:
        return len(set(self.table) | set(self.eager))


class RootGroup(TyperGroup):
    """``detente``: lazy subcommands, plain-text help, global options anywhere."""

    table: Table = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(self.table, self.commands)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from detente.cli.render import EXIT_CODES_HELP

        rows = [(name, help_) for name, (help_, _) in self.table.items()]
        formatter.write(root_help(rows, EXIT_CODES_HELP))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(self, ctx, args))


def _options_of(command: Any) -> tuple[set[str], set[str]]:
    """A command's option spellings, and those of them that take a value."""
    names: set[str] = set()
    valued: set[str] = set()
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", "") != "option":
            continue
        spellings = [*param.opts, *param.secondary_opts]
        names.update(spellings)
        if not param.is_flag and not getattr(param, "count", False):
            valued.update(param.opts)
    return names, valued


def hoist_global_options(root: Any, ctx: Any, args: Sequence[str]) -> list[str]:
    """``args`` with the global options written after the command moved before it.

    The command path (``claim status``) is resolved through ``root``; a global option the
    command declares itself (``serve --repo``, ``claim list --repo``) stays where it is,
    as does everything after ``--`` and the value of any of the command's own options.

    Args:
        root: the root group.
        ctx: the root context.
        args: the command line after the program name.

    Returns:
        The reordered command line (the same tokens).
    """
    args = list(args)
    start = 0
    while start < len(args) and args[start].startswith("-") and args[start] != "--":
        takes_value = args[start] in _TAKES_VALUE
        start += 2 if takes_value else 1
    if start >= len(args) or args[start] == "--":
        return args
    command, end = root, start
    while end < len(args) and isinstance(command, TyperGroup):
        try:
            found = command.get_command(ctx, args[end])
        except KeyError:
            found = None
        if found is None:
            break
        command, end = found, end + 1
        if end < len(args) and args[end].startswith("-"):
            break
    own, valued = _options_of(command)
    moved: list[str] = []
    rest: list[str] = []
    i = end
    while i < len(args):
        token = args[i]
        if token == "--":
            rest.extend(args[i:])
            break
        name, eq, _ = token.partition("=")
        if name in _HOISTED and name not in own:
            width = 2 if name in _TAKES_VALUE and not eq else 1
            moved.extend(args[i : i + width])
            i += width
            continue
        width = 2 if name in valued and not eq else 1
        rest.extend(args[i : i + width])
        i += width
    return args[:start] + moved + args[start:end] + rest


def _print_version(ctx: typer.Context, value: bool) -> None:
    """``--version`` anywhere among the global options (the bare form never reaches typer)."""
    if not value or ctx.resilient_parsing:
        return
    from detente import __version__

    typer.echo(f"detente {__version__}")
    raise typer.Exit()


def _global(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            envvar="DETENTE_URL",
            help="detente server URL (default: http://127.0.0.1:7420 if it serves this "
            "repository, else local mode).",
        ),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="A directory inside the repository (default: cwd)."),
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            envvar="DETENTE_LOCAL",
            help="Work in-process on the repository's own store; never use a server "
            "(overrides DETENTE_URL; an explicit --server with --local is an error).",
        ),
    ] = False,
    json_flag: JsonFlag = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Say which server or store is used.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            is_eager=True,
            callback=_print_version,
            help="Print detente's version and exit.",
        ),
    ] = False,
) -> None:
    # An explicit flag beats an environment variable (the usual precedence). Sources are
    # compared by name: typer's context may report them with its own copy of click's enum.
    def source(name: str) -> str:
        found = ctx.get_parameter_source(name)
        return found.name if found is not None else ""

    if local and source("local") == "COMMANDLINE" and source("server") == "ENVIRONMENT":
        server = None  # --local with DETENTE_URL set: work locally
    elif server and source("server") == "COMMANDLINE" and source("local") == "ENVIRONMENT":
        local = False  # --server with DETENTE_LOCAL set: use that server
    ctx.obj = Settings(
        server=server,
        repo=(repo or Path.cwd()).absolute(),
        json=json_flag,
        local=local,
        verbose=verbose,
    )


def build_app(table: Table) -> typer.Typer:
    """The ``detente`` Typer app over the lazily imported commands of ``table``."""
    group = type("DetenteGroup", (RootGroup,), {"table": table})
    app = typer.Typer(
        name="detente",
        cls=group,
        help="Coordinate AI coding agents in one git repository: claims, leases, revisions, "
        "evidence.",
        no_args_is_help=True,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        rich_markup_mode="markdown",
        pretty_exceptions_enable=False,
    )
    app.callback()(_global)
    return app
