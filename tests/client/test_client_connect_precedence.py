"""connect's precedence: an explicit argument beats the environment, as a command-line
flag beats an environment variable; two explicit (or two environment) choices conflict."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from detente import errors
from detente.client import ServerUnavailable, connect
from detente.client.connect import LOCAL_ENV, URL_ENV


def _refusing_url() -> tuple[socket.socket, str]:
    """A loopback port that is bound but not listening: connections are refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_explicit_local_mode_beats_detente_url_from_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LOCAL_ENV, raising=False)
    sock, url = _refusing_url()
    monkeypatch.setenv(URL_ENV, url)  # unreachable: used, it would raise
    with sock, connect(None, repo, local=True) as client:
        assert client.mode == "local"
        assert client.list_claims()["claims"] == []


def test_an_explicit_url_beats_detente_local_from_the_environment(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCAL_ENV, "1")
    sock, url = _refusing_url()
    with sock, pytest.raises(ServerUnavailable):  # it tried the server
        connect(url, repo)


def test_an_explicit_url_with_explicit_local_mode_is_a_validation_error(repo: Path) -> None:
    with pytest.raises(errors.ValidationError, match="choose either") as caught:
        connect("http://127.0.0.1:1", repo, local=True)
    assert caught.value.field == "server"


def test_both_choices_from_the_environment_are_a_validation_error_naming_both(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCAL_ENV, "1")
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:1")
    with pytest.raises(errors.ValidationError, match="DETENTE_URL and DETENTE_LOCAL"):
        connect(None, repo)
