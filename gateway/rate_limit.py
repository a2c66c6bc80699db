"""Per-client-IP quotas shared by every gateway replica: one token bucket per (kind, IP) in
Redis, taken by one atomic Lua script (EVALSHA), with the Redis server's clock so that replicas
with drifting clocks agree. A bucket left alone refills and expires."""

from __future__ import annotations

import math
from dataclasses import dataclass

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script
from engine.errors import ErrorCode
from gateway.errors import ApiError

# KEYS[1]: the bucket. ARGV: rate (tokens/s), burst. Returns {allowed (0/1), retry_after_ms}.
TAKE = Script(
    "limits.take",
    """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, wait}
""",
)


@dataclass(frozen=True, slots=True)
class Bucket:
    rate: float  # tokens a second
    burst: float


class RateLimits:
    def __init__(self, redis: AsyncRedis, buckets: dict[str, Bucket]) -> None:
        self.buckets = buckets
        self.redis = redis

    async def take(self, kind: str, ip: str) -> None:
        """One token of `kind` for `ip`; ApiError `rate_limited` (429 + Retry-After) when the
        bucket is empty."""
        bucket = self.buckets[kind]
        allowed, wait_ms = await TAKE.run(
            self.redis, [keys.rate_limit(kind, ip)], [bucket.rate, bucket.burst]
        )
        if not int(allowed):
            raise ApiError(
                ErrorCode.RATE_LIMITED,
                f"too many requests ({kind}) from your address, retry later",
                429,
                retry_after=max(1, math.ceil(int(wait_ms) / 1000)),
            )
