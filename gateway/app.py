"""The gateway's FastAPI application: REST under /api, the WebSocket at /ws, the web client's
page and files, health and metrics."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from actors.directory import NoRoom
from cluster.settings import Settings, get_settings
from gateway import ws
from gateway.body_limit import BodyLimit, BodyTooLarge, body_too_large_handler
from gateway.client_files import STATIC, ClientFiles
from gateway.client_page import WebClient
from gateway.errors import (
    BACKEND_DOWN,
    ApiError,
    api_error_handler,
    http_error_handler,
    no_room_handler,
    unavailable_handler,
    validation_handler,
)
from gateway.openapi import openapi
from gateway.routes import (
    meta,
    pages,
    profiles,
    quickplay,
    replays,
    sessions,
    tables,
    tutorial,
)
from gateway.security_headers import SecurityHeaders
from gateway.services import Services
from gateway.static_files import StaticFiles
from gateway.trusted_host import TrustedHost


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = Services.start(settings)
        app.state.loop = asyncio.get_running_loop()  # where the internal port's cell calls run
        app.state.services = services
        services.directory.refill_soon()
        services.directory.publish_cell()
        services.directory.count_parked()
        services.keep_ratings_right()
        services.judge_older_profiles()
        print(f"Quatro is up: http://localhost:{settings.port}", flush=True)
        try:
            yield
        finally:
            await services.close()

    # The docs are public unless turned off or moved to the internal port (gateway.internal).
    public_docs = settings.docs and settings.internal_port is None
    app = FastAPI(
        title="Quatro",
        summary="A real-time team card game: REST for tables and seats, a WebSocket for play.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url="/docs" if public_docs else None,
        redoc_url="/redoc" if public_docs else None,
        openapi_url="/openapi.json" if public_docs else None,
    )
    app.openapi = lambda: openapi(app)  # type: ignore[method-assign]
    app.add_exception_handler(ApiError, api_error_handler)
    app.add_exception_handler(HTTPException, http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_handler)
    app.add_exception_handler(BodyTooLarge, body_too_large_handler)
    unavailable = unavailable_handler(settings.retry_after_s)
    for backend_error in BACKEND_DOWN:
        app.add_exception_handler(backend_error, unavailable)
    app.add_exception_handler(NoRoom, no_room_handler(settings.retry_after_s))
    routers = [
        sessions.router,
        tables.router,
        replays.router,
        quickplay.router,
        tutorial.router,
        profiles.router,
        meta.router,
        ws.router,
    ]
    if settings.public_metrics:
        routers.append(meta.metrics_router)
    for router in routers:
        app.include_router(router)
    add_web_client(app)
    # Outermost last: headers on every answer (refusals included), then Host, then body size.
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(TrustedHost, allowed_hosts=settings.allowed_hosts())
    app.add_middleware(SecurityHeaders)
    return app


def add_web_client(app: FastAPI, root: Path = STATIC) -> None:
    """The web client's page routes and files: they need neither Ray nor Redis (the browser
    tests of the client alone serve just these). The files are read once, and a page that
    cannot be rendered stops the start here. A browser asking for a page where there is none
    gets the page, with 404 (pages.not_found)."""
    app.state.web_client = WebClient(ClientFiles(root))
    app.include_router(pages.router)
    app.add_exception_handler(404, pages.not_found)
    app.mount("/static", StaticFiles(app.state.web_client), name="static")
