"""Run the gateway with uvicorn: server pings, the 64 KiB frame limit, and a graceful SIGTERM
that closes every socket with 1001 (going away) so clients reconnect elsewhere."""

from __future__ import annotations

import logging
from types import FrameType

import uvicorn
from fastapi import FastAPI

from cluster.connect import connect_ray
from cluster.settings import Settings, get_settings
from gateway.app import create_app
from gateway.internal import start_internal


class GatewayServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Tell every player to go away (1001) before uvicorn stops waiting for them; from the
        # signal handler, only through the loop.
        svc = getattr(self.app.state, "services", None)
        loop = getattr(self.app.state, "loop", None)
        if svc is not None and loop is not None:
            loop.call_soon_threadsafe(svc.hubs.going_away)
        super().handle_exit(sig, frame)


def serve(settings: Settings | None = None) -> None:
    settings = settings or get_settings()
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
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
        timeout_graceful_shutdown=10,
        log_level=settings.log_level,
        access_log=False,
    )
    internal = start_internal(app, settings)
    try:
        GatewayServer(config, app).run()
    finally:
        if internal is not None:
            internal.should_exit = True
