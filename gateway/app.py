"""The gateway's FastAPI application: REST under /api, the WebSocket at /ws, the web client's
page and files, health and metrics."""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.staticfiles import StaticFiles

from cluster.settings import Settings, get_settings
from gateway import ws
from gateway.errors import ApiError, api_error_handler, validation_handler
from gateway.routes import meta, pages, sessions, tables
from gateway.services import Services

# Debian's mime table may lack these; browsers refuse modules served as text/plain.
for _type, _ext in (
    ("text/javascript", ".js"),
    ("text/javascript", ".mjs"),
    ("text/css", ".css"),
    ("application/json", ".json"),
    ("image/svg+xml", ".svg"),
    ("application/manifest+json", ".webmanifest"),
):
    mimetypes.add_type(_type, _ext)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = Services.start(settings)
        app.state.services = services
        app.state.loop = asyncio.get_running_loop()
        services.directory.refill_soon()
        print(f"Quatro is up: http://localhost:{settings.port}", flush=True)
        try:
            yield
        finally:
            await services.close()

    app = FastAPI(
        title="Quatro",
        summary="A real-time team card game: REST for tables and seats, a WebSocket for play.",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.add_exception_handler(ApiError, api_error_handler)
    app.add_exception_handler(RequestValidationError, validation_handler)
    for router in (sessions.router, tables.router, meta.router, ws.router, pages.router):
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=pages.STATIC, check_dir=False), name="static")
    return app
