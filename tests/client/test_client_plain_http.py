"""plain_http: one HTTP/1.1 exchange over a socket, against a real server on loopback
(the standard library's threaded HTTP server, answering each framing a server may use)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from detente.client.plain_http import MalformedResponse, exchange
from detente.client.problems import ServerUnavailable
from detente.client.stdlib_http import StdlibHttpClient
from detente.errors import NotFoundError, ValidationError


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, *, chunked: bool = False, extra: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (body[:3], body[3:]):
                self.wfile.write(f"{len(part):x};ext=1\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\nTrailer: x\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body + extra)  # bytes past the length are not the body

    def do_GET(self) -> None:
        if self.path.startswith("/chunked"):
            self._send(200, b'{"framing":"chunked"}', chunked=True)
        elif self.path == "/empty":
            self.send_response(204)
            self.end_headers()
        elif self.path.startswith("/v1/claims/"):
            problem = {"code": "not_found", "detail": "no claim", "status": 404}
            self._send(404, json.dumps(problem).encode())
        else:
            self._send(200, b'{"framing":"length"}', extra=b"trailing bytes")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        echo = {
            "path": self.path,
            "host": self.headers["Host"],
            "auth": self.headers.get("Authorization"),
            "body": body.decode(),
            "connection": self.headers["Connection"],
        }
        self._send(200, json.dumps(echo).encode())


@pytest.fixture
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


def test_a_body_framed_by_its_length_is_read_to_that_length(server: int) -> None:
    status, body = exchange("127.0.0.1", server, "GET", "/length", {}, None, 10)

    assert status == 200
    assert json.loads(body) == {"framing": "length"}


def test_a_chunked_body_is_joined_and_its_extensions_and_trailers_dropped(server: int) -> None:
    status, body = exchange("127.0.0.1", server, "GET", "/chunked", {}, None, 10)

    assert (status, json.loads(body)) == (200, {"framing": "chunked"})


def test_a_no_content_answer_has_an_empty_body(server: int) -> None:
    assert exchange("127.0.0.1", server, "GET", "/empty", {}, None, 10) == (204, b"")


def test_a_post_carries_its_headers_body_and_asks_to_close(server: int) -> None:
    headers = {"Authorization": "Bearer t0k"}
    status, body = exchange("127.0.0.1", server, "POST", "/v1/x?a=1", headers, b'{"k":1}', 10)

    echo = json.loads(body)
    assert status == 200
    assert echo == {
        "path": "/v1/x?a=1",
        "host": f"127.0.0.1:{server}",
        "auth": "Bearer t0k",
        "body": '{"k":1}',
        "connection": "close",
    }


def test_a_header_with_a_line_break_is_never_sent(server: int) -> None:
    with pytest.raises(ValueError, match="line break"):
        exchange("127.0.0.1", server, "GET", "/", {"X": "a\r\nInjected: 1"}, None, 10)


def test_bytes_that_are_not_http_are_a_malformed_answer() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]

        def answer_garbage() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"SSH-2.0-OpenSSH\r\n\r\n")

        thread = threading.Thread(target=answer_garbage)
        thread.start()
        with pytest.raises(MalformedResponse, match="status line"):
            exchange("127.0.0.1", port, "GET", "/", {}, None, 10)
        thread.join(timeout=10)


def test_the_light_client_decodes_a_problem_into_its_error(server: int) -> None:
    client = StdlibHttpClient(f"http://127.0.0.1:{server}")

    with pytest.raises(NotFoundError, match="no claim"):
        client.get_claim("clm_x", include=[])


def test_the_light_client_reports_a_closed_port_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = StdlibHttpClient(f"http://127.0.0.1:{port}")

    with pytest.raises(ServerUnavailable, match="cannot reach"):
        client.health()


def test_a_token_with_a_line_break_is_refused_before_any_request() -> None:
    with pytest.raises(ValidationError) as refused:
        StdlibHttpClient("http://127.0.0.1:1", token="abc\r\nX-Evil: 1")

    assert refused.value.field == "token"
