"""StdlibHttpClient: the requests of one client share one kept-alive connection; a
connection the server closed is replaced, and only a safe request is sent again.

The server is a real HTTP/1.1 server on loopback (:mod:`http.server`) that records the
client's port per request, so the connections the client opened can be counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from detente.client.problems import ServerUnavailable
from detente.client.stdlib_http import StdlibHttpClient


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    #: (method, path, client port) per request answered.
    seen: list[tuple[str, str, int]]
    #: Close the connection after each answer without saying so (a server's idle timeout).
    drop_after_answer: bool


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append((self.command, self.path, self.client_address[1]))
        body = json.dumps({"ok": True, "repos": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if self.server.drop_after_answer:
            self.close_connection = True

    do_GET = _answer
    do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _Handler)
    httpd.seen = []
    httpd.drop_after_answer = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def _url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_the_requests_of_one_client_share_one_connection(server: _Server) -> None:
    with StdlibHttpClient(_url(server)) as client:
        client.health()
        client.repos()
        client.pre_commit("demo", None, ["src/a.py"])

    assert [method for method, _, _ in server.seen] == ["GET", "GET", "POST"]
    assert len({port for _, _, port in server.seen}) == 1


def test_a_safe_request_on_a_connection_the_server_closed_is_sent_again_on_a_new_one(
    server: _Server,
) -> None:
    server.drop_after_answer = True
    with StdlibHttpClient(_url(server)) as client:
        client.health()
        answer = client.repos()

    assert answer == {"ok": True, "repos": []}
    assert [method for method, _, _ in server.seen] == ["GET", "GET"]
    assert len({port for _, _, port in server.seen}) == 2


def test_a_post_on_a_connection_the_server_closed_is_not_sent_again(server: _Server) -> None:
    server.drop_after_answer = True
    with StdlibHttpClient(_url(server)) as client:
        client.health()
        with pytest.raises(ServerUnavailable):
            client.pre_commit("demo", None, ["src/a.py"])

    assert [method for method, _, _ in server.seen] == ["GET"]


_PLAIN_THEN_FULL = """
import sys
from detente.client.stdlib_http import StdlibHttpClient

with StdlibHttpClient(sys.argv[1]) as client:
    client.health()
    client.repos()
print("ssl loaded:", "ssl" in sys.modules)
print("http.client left loaded:", "http.client" in sys.modules)
import http.client
print("https available after:", hasattr(http.client, "HTTPSConnection"))
"""


def test_a_plain_http_server_is_reached_without_loading_ssl_and_later_imports_get_all_of_it(
    server: _Server,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PLAIN_THEN_FULL, _url(server)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    assert done.stdout.splitlines() == [
        "ssl loaded: False",
        "http.client left loaded: False",
        "https available after: True",
    ]
    assert len({port for _, _, port in server.seen}) == 1  # one kept-alive connection
