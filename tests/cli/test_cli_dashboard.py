"""``detente dashboard`` without a server to open."""

from __future__ import annotations

import json
import socket

from typer.testing import CliRunner

from detente.cli.main import app


def test_dashboard_without_a_running_server_says_how_to_start_one_and_exits_9() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"  # bound, not listening: refused

        result = CliRunner().invoke(app, ["--server", url, "dashboard", "--json"])

    assert result.exit_code == 9
    problem = json.loads(result.stdout)
    assert problem["code"] == "store_unavailable"
    assert "detente serve" in problem["detail"]
