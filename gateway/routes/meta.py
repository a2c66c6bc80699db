"""What is not a game resource: the emoji list, client config, health and metrics."""

from __future__ import annotations

import asyncio

import ray
from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from engine import EMOJIS
from gateway.deps import Svc
from gateway.models import ClientConfig, Emojis, Health, Readiness

router = APIRouter()
# Prometheus text: on the public port unless QUATRO_PUBLIC_METRICS=0, and on the internal port.
metrics_router = APIRouter()


def _ray_resources() -> bool:
    return bool(ray.cluster_resources())  # type: ignore[no-untyped-call]


@router.get("/api/emojis", response_model=Emojis, tags=["meta"])
async def emojis() -> Emojis:
    """The 24 sign emojis of R5, in order."""
    return Emojis(emojis=list(EMOJIS))


@router.get("/api/config", response_model=ClientConfig, tags=["meta"])
async def config(svc: Svc) -> ClientConfig:
    return ClientConfig(test_hooks=svc.settings.test_hooks)


@router.get("/healthz", response_model=Health, tags=["ops"])
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=Readiness,
    tags=["ops"],
    responses={503: {"model": Readiness, "description": "not ready: the checks say which"}},
)
async def readyz(svc: Svc) -> JSONResponse:
    """Redis answers, Ray answers, and a table actor answers a call from this gateway. The
    three run side by side so the answer comes within the probe's 5 s."""

    async def redis_check() -> str:
        try:
            async with asyncio.timeout(2):
                await svc.redis.ping()
            return "ok"
        except Exception as exc:
            return f"down: {type(exc).__name__}"

    async def ray_check() -> str:
        try:
            ok = ray.is_initialized() and await asyncio.wait_for(
                asyncio.to_thread(_ray_resources), 3
            )
            return "ok" if ok else "down"
        except Exception as exc:
            return f"down: {type(exc).__name__}"

    async def tables_check() -> str:
        try:
            return await svc.directory.reach_tables(wait_s=3)
        except Exception as exc:  # Redis down: redis_check says so too
            return f"down: {type(exc).__name__}"

    redis_state, ray_state, tables_state = await asyncio.gather(
        redis_check(), ray_check(), tables_check()
    )
    checks = {"redis": redis_state, "ray": ray_state, "tables": tables_state}
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse({"ready": ready, **checks}, 200 if ready else 503)


@metrics_router.get(
    "/metrics",
    tags=["ops"],
    response_class=PlainTextResponse,
    responses={200: {"description": "Prometheus' text exposition format"}},
)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
