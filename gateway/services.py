"""What the gateway connects to, built once at startup and closed at shutdown."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass

import redis.asyncio as aioredis

from actors.directory import Directory
from cluster.connect import connect_ray
from cluster.redis_client import async_redis
from cluster.settings import Settings
from gateway.hub import Hubs
from gateway.sessions import Sessions

log = logging.getLogger("quatro.gateway")


@dataclass
class Services:
    settings: Settings
    gateway: str  # this process's id: names its subscriptions and its connections
    redis: aioredis.Redis
    sessions: Sessions
    directory: Directory
    hubs: Hubs

    @classmethod
    def start(cls, settings: Settings) -> Services:
        if not settings.redis_url:
            raise RuntimeError("REDIS_URL is not set (python -m cluster up sets it)")
        if settings.test_hooks:
            log.warning("QUATRO_TEST_HOOKS=1: test hooks are ON (rigged deals, fast clocks)")
        connect_ray(settings)
        redis = async_redis(settings.redis_url)
        gateway = f"gw-{uuid.uuid4().hex[:10]}"
        directory = Directory(
            redis,
            settings.ray_namespace,
            settings.redis_url,
            settings.pool_size,
            settings.over_idle_s,
            settings.lobby_idle_s,
            settings.abandoned_idle_s,
        )
        return cls(
            settings=settings,
            gateway=gateway,
            redis=redis,
            sessions=Sessions(redis, settings.session_ttl_s),
            directory=directory,
            hubs=Hubs(directory, gateway),
        )

    async def close(self) -> None:
        await self.hubs.close()
        await self.directory.close()
        await self.redis.aclose()
