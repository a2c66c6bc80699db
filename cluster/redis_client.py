"""Redis clients that ride out a restart: a broken pooled connection is retried on a new one."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError


def async_redis(url: str, timeout_s: float = 5.0) -> aioredis.Redis:
    return aioredis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        health_check_interval=10,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3),
        retry_on_error=[ConnectionError, TimeoutError, ConnectionResetError],
    )
