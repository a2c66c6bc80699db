"""The data plane's secret: the same one Ray's token authentication uses.

Whoever may join the Ray cluster may already run code in it, so Ray's token is the natural key
for the gateway ↔ table connections, and operators have one secret to rotate, not two. It is
looked up where Ray looks (`RAY_AUTH_TOKEN`, `RAY_AUTH_TOKEN_PATH`, `~/.ray/auth_token`). A
cluster without token authentication (said loudly at startup) gets a random secret shared
through Redis instead, so the data plane is never open to anyone who reaches a port.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from cluster.ray_auth import RAY_DEFAULT_TOKEN
from cluster.redis_client import RedisSettings, sync_redis

log = logging.getLogger("quatro.cluster")

REDIS_KEY = "quatro:link-secret"


def ray_token() -> str | None:
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    if token:
        return token
    for path in (os.environ.get("RAY_AUTH_TOKEN_PATH", ""), str(RAY_DEFAULT_TOKEN)):
        if path and Path(path).is_file():
            text = Path(path).read_text().strip()
            if text:
                return text
    return None


def link_secret(store: str | RedisSettings) -> str:
    """Blocking: called once per process, at startup."""
    token = ray_token()
    if token is not None:
        return token
    log.warning("no Ray auth token here: the data plane uses a secret kept in Redis")
    r = sync_redis(store)
    try:
        r.set(REDIS_KEY, secrets.token_hex(32), nx=True)
        return str(r.get(REDIS_KEY))
    finally:
        r.close()
