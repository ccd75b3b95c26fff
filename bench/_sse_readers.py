"""The subscribers of ``bench/watch.py``, in a process of their own.

``python bench/_sse_readers.py PORT SINCE LAST COUNT OUT`` opens COUNT streams of
``GET /v1/events/stream?since=SINCE`` on 127.0.0.1:PORT, prints ``ready`` once every
stream's response head has arrived, then reads until every stream has seen event LAST.
It writes ``(seq, arrival time)`` of every event of every stream to OUT (doubles, native
order; the arrival is ``time.time()`` right after the ``recv`` that brought it) and prints
its own CPU seconds.

One thread, non-blocking sockets and ``epoll``, parsing only the ``id:`` lines: a few
microseconds per delivery, so the readers are not what the bench measures (an asyncio
stream per subscriber costs several times that, and under 1,000 subscribers its own
queueing showed up in the p99).
"""

from __future__ import annotations

import array
import select
import socket
import sys
import time


def main() -> None:
    port, since, last, count, out = (
        int(sys.argv[1]),
        int(sys.argv[2]),
        int(sys.argv[3]),
        int(sys.argv[4]),
        sys.argv[5],
    )
    # A loopback Host: the server refuses any other name (DNS rebinding).
    host = f"127.0.0.1:{port}"
    request = f"GET /v1/events/stream?since={since} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    poll = select.epoll()
    socks: dict[int, socket.socket] = {}
    buffers: dict[int, bytes] = {}
    headed: set[int] = set()
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(request)
        sock.setblocking(False)
        socks[sock.fileno()] = sock
        buffers[sock.fileno()] = b""
        poll.register(sock.fileno(), select.EPOLLIN)
    arrivals = array.array("d")
    open_streams = count
    announced = False
    while open_streams:
        if not announced and len(headed) == count:
            print("ready", flush=True)
            announced = True
        for fd, _ in poll.poll():
            chunk = socks[fd].recv(262144)
            now = time.time()
            if not chunk:
                raise RuntimeError("a stream ended early")
            buffer = buffers[fd] + chunk
            if fd not in headed:
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    buffers[fd] = buffer
                    continue
                assert buffer.startswith(b"HTTP/1.1 200"), buffer[:200]
                headed.add(fd)
                buffer = buffer[end + 4 :]
            done = False
            start = 0
            while True:
                at = buffer.find(b"\nid: ", start)  # every message follows a newline
                if at < 0:
                    break
                end = buffer.find(b"\n", at + 1)
                if end < 0:
                    break
                seq = int(buffer[at + 5 : end])
                arrivals.append(seq)
                arrivals.append(now)
                start = end
                if seq >= last:
                    done = True
            buffers[fd] = buffer[start:]
            if done:
                poll.unregister(fd)
                socks.pop(fd).close()
                open_streams -= 1
    with open(out, "wb") as f:
        arrivals.tofile(f)
    print(time.process_time(), flush=True)


if __name__ == "__main__":
    main()
