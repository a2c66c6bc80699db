"""An idle keep-alive connection outlives every client's idle timeout.

A client reuses a pooled connection until its own idle expiry (httpx: 5 s; browsers and proxies:
60 s or more). A server that closes idle connections sooner races every such reuse: a request
written as the server closes gets no answer at all ("Server disconnected without sending a
response"; a 502 behind a proxy). uvicorn's own default closed them after exactly 5 s."""

from __future__ import annotations

import select
import socket
import time

from tests.conftest import Stack

HTTPX_POOL_EXPIRY_S = 5.0  # httpx.Limits' default keepalive_expiry
MARGIN_S = 1.5


def _get(sock: socket.socket, deadline: float) -> bytes:
    """One GET /healthz on an open connection; the whole response (it is small and sized)."""
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        left = deadline - time.monotonic()
        assert left > 0, f"no whole answer in time: {data!r}"
        ready, _, _ = select.select([sock], [], [], left)
        if ready:
            chunk = sock.recv(4096)
            assert chunk, f"the server closed the connection mid-answer: {data!r}"
            data += chunk
    return data


def test_an_idle_connection_is_still_served_after_the_client_pool_expiry(stack: Stack) -> None:
    with socket.create_connection(("127.0.0.1", stack.a.port), timeout=10) as sock:
        assert _get(sock, time.monotonic() + 10).startswith(b"HTTP/1.1 200")
        idle_from = time.monotonic()
        idle_until = idle_from + HTTPX_POOL_EXPIRY_S + MARGIN_S
        # Idle, watching the socket: a close by the server shows as readable with no data.
        while (left := idle_until - time.monotonic()) > 0:
            ready, _, _ = select.select([sock], [], [], left)
            if ready:
                early = sock.recv(4096)
                assert early, (
                    "the gateway closed an idle keep-alive connection after "
                    f"{time.monotonic() - idle_from:.1f} s: a client reusing it then "
                    "gets no answer"
                )
        assert _get(sock, time.monotonic() + 10).startswith(b"HTTP/1.1 200")
