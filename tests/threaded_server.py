"""One real uvicorn server in a background thread, on a socket the test bound first.

The socket is bound to port 0 before the server starts, so no other process (a parallel
test worker, a client's outgoing connection) can take the port between choosing it and
listening on it.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

#: How long a server may take to start (seconds): a bound, not a sleep; a loaded machine
#: running the suite on every core can take several seconds to warm an app up.
START_BOUND = 60.0


class _Server(uvicorn.Server):
    """A uvicorn server that signals when it accepts connections."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` on 127.0.0.1 until the block exits; yields the base URL.

    Fails at once if the server's thread ends before it listens, and after
    :data:`START_BOUND` seconds if it never does.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    server = _Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        waited = 0.0
        while not server.ready.wait(timeout=0.05):
            waited += 0.05
            assert thread.is_alive(), "the server's thread ended before it listened"
            assert waited < START_BOUND, f"server did not start within {START_BOUND:.0f} s"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
