"""Run the gateway with uvicorn: server pings, the 64 KiB frame limit, and a graceful SIGTERM
that closes every socket with 1001 (going away) so clients reconnect elsewhere."""

from __future__ import annotations

import logging
import socket

import uvicorn
from fastapi import FastAPI

from cluster.connect import connect_ray
from cluster.link_secret import link_secret
from cluster.settings import Settings, get_settings
from gateway.app import create_app
from gateway.internal import start_internal

GOING_AWAY_WAIT_S = 3.0


class GatewayServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Every player is told to go away (1001: reconnect elsewhere, the table lives on), and
        those closes are sent, before uvicorn shuts what is left with its own 1012: queued from
        the signal handler instead, they raced it and lost one time in four."""
        svc = getattr(self.app.state, "services", None)
        if svc is not None:
            await svc.hubs.send_going_away(GOING_AWAY_WAIT_S)
        await super().shutdown(sockets)


async def _nothing(scope: object, receive: object, send: object) -> None:
    """The app of the Config that only binds the port (uvicorn's own bind, IPv6 included)."""


def serve(settings: Settings | None = None) -> None:
    settings = settings or get_settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The port first: bound after the app's startup, a port in use left the gateway (and the
    # launcher of `make run` around it) waiting forever on its own shutdown. Taken, it ends
    # here, before Ray is joined or any task started.
    public = uvicorn.Config(_nothing, host=settings.host, port=settings.port).bind_socket()
    connect_ray(settings)
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        ws_max_size=settings.max_frame_bytes,
        # The server pings; a peer that does not answer within the timeout is closed, so a
        # silent connection is gone after ping_interval + timeout = 15 s (R24).
        ws_ping_interval=settings.ping_interval_s,
        ws_ping_timeout=settings.silence_s - settings.ping_interval_s,
        timeout_keep_alive=settings.keep_alive_s,
        timeout_graceful_shutdown=10,
        log_level=settings.log_level,
        access_log=False,
    )
    # With cells, other cells' gateways ask this one on its internal port with the link secret.
    secret = link_secret(settings.store()) if settings.cell and settings.redis_url else None
    internal = start_internal(app, settings, secret)
    try:
        GatewayServer(config, app).run(sockets=[public])
    finally:
        if internal is not None:
            internal.stop()
