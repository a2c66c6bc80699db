"""The internal port (QUATRO_INTERNAL_PORT): /metrics, and /docs with /openapi.json when the
docs are on, served by a second uvicorn server in the gateway's process, for Prometheus and
operators inside the cluster, never through the public ingress.

It runs in a thread of its own with its own event loop: it shares nothing with the public app
but the process-wide Prometheus registry and the public app's OpenAPI description (built once,
read-only), and uvicorn installs no signal handlers outside the main thread, so SIGTERM stays
the public server's."""

from __future__ import annotations

import threading
from typing import Any

import uvicorn
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from cluster.settings import Settings
from gateway.body_limit import BodyLimit, BodyTooLarge, body_too_large_handler
from gateway.cells import cells_router
from gateway.routes.meta import metrics_router


def internal_app(public: FastAPI, settings: Settings, cell_secret: str | None = None) -> FastAPI:
    """`cell_secret`: with cells, the secret other cells' gateways ask this one with
    (gateway/cells.py); their routes exist only then."""
    app = FastAPI(title="Quatro (internal)", docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(metrics_router)
    if cell_secret is not None:
        app.include_router(cells_router(public, cell_secret))
        # The cell routes read a body before its signature can be checked: anyone who reaches
        # the internal port gets the public port's limit, not an unbounded read.
        app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
        app.add_exception_handler(BodyTooLarge, body_too_large_handler)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    if settings.docs:

        @app.get("/openapi.json", include_in_schema=False)
        async def openapi() -> dict[str, Any]:
            return public.openapi()

        @app.get("/docs", include_in_schema=False)
        async def docs() -> HTMLResponse:
            return get_swagger_ui_html(openapi_url="/openapi.json", title="Quatro API")

    return app


class InternalServer:
    """The internal server's thread and its owner's one handle on it: `stop` asks it to end and
    waits until it has (a scrape in flight gets uvicorn's graceful shutdown)."""

    STOP_WAIT_S = 5.0

    def __init__(self, server: uvicorn.Server) -> None:
        self.server = server
        self.thread = threading.Thread(target=server.run, name="internal-http")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(self.STOP_WAIT_S)


def start_internal(
    public: FastAPI, settings: Settings, cell_secret: str | None = None
) -> InternalServer | None:
    """Start the internal server in a thread of its own; None when no internal port is set.
    The caller owns it: `stop` when the public server is done."""
    if settings.internal_port is None:
        return None
    config = uvicorn.Config(
        internal_app(public, settings, cell_secret),
        host=settings.host,
        port=settings.internal_port,
        log_level=settings.log_level,
        access_log=False,
        lifespan="off",
        timeout_keep_alive=settings.keep_alive_s,  # scrapers reuse connections too
        # A scrape still open at shutdown must not keep the process alive: the thread is joined.
        timeout_graceful_shutdown=int(InternalServer.STOP_WAIT_S) - 1,
    )
    internal = InternalServer(uvicorn.Server(config))
    internal.thread.start()
    return internal
