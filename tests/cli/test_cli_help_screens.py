"""Every help screen of the CLI: flags are shown as flags, never with a ``<bool>`` metavar."""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.testing import CliRunner

from detente.cli.main import COMMANDS, app


def _paths(group: Any, ctx: Any, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
    # Typer's click (vendored or not): groups are told apart by having subcommands.
    found: list[tuple[str, ...]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = (*prefix, name)
        found.append(path)
        if hasattr(command, "list_commands"):
            found.extend(_paths(command, type(ctx)(command, parent=ctx, info_name=name), path))
    return found


def _every_command() -> list[tuple[str, ...]]:
    root: Any = typer.main.get_command(app)
    assert hasattr(root, "list_commands")
    return _paths(root, root.make_context("detente", [], resilient_parsing=True), ())


def test_every_top_level_command_and_subcommand_has_a_help_screen_without_bool_metavars() -> None:
    commands = _every_command()
    assert {path[0] for path in commands} >= set(COMMANDS)
    assert ("claim", "complete") in commands and ("agents", "register") in commands
    runner = CliRunner()
    for path in commands:
        result = runner.invoke(app, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, (path, result.output)
        assert "Usage:" in result.output, path
        for metavar in ("<bool>", "BOOLEAN"):
            assert metavar not in result.output, (path, result.output)


def test_no_help_screen_loses_a_default_to_markup_or_leaves_a_stray_space() -> None:
    runner = CliRunner()
    shown = 0
    for path in _every_command():
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        for line in result.output.splitlines():  # "Agent name ." once markup ate "[default: ...]"
            assert not re.search(r"\w \.(?:\s|$)", line), (path, line)
        shown += result.output.count("(default:")
    assert shown >= 40  # the defaults the help texts name are printed, not eaten as markup
