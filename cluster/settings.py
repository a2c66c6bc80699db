"""One settings object, read from the environment once (`get_settings()` is cached).

Names follow what operators already use: `RAY_ADDRESS`, `REDIS_URL`, `PORT`; everything specific
to Quatro starts with `QUATRO_`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", populate_by_name=True)

    ray_address: str | None = Field(default=None, validation_alias=_env("RAY_ADDRESS"))
    redis_url: str | None = Field(default=None, validation_alias=_env("REDIS_URL"))
    host: str = Field(default="127.0.0.1", validation_alias=_env("HOST", "QUATRO_HOST"))
    port: int = Field(default=8000, validation_alias=_env("PORT"))
    test_hooks: bool = Field(default=False, validation_alias=_env("QUATRO_TEST_HOOKS"))
    ray_namespace: str = Field(default="quatro", validation_alias=_env("RAY_NAMESPACE"))
    # Ray's token authentication. The embedded head always uses a token of its own, made per run;
    # joining RAY_ADDRESS, the driver uses these (Ray reads the last two itself) and the mode
    # defaults to `token` when a token is given: see cluster/ray_auth.py.
    ray_auth_mode: str | None = Field(default=None, validation_alias=_env("RAY_AUTH_MODE"))
    ray_auth_token: SecretStr | None = Field(default=None, validation_alias=_env("RAY_AUTH_TOKEN"))
    ray_auth_token_path: str | None = Field(
        default=None, validation_alias=_env("RAY_AUTH_TOKEN_PATH")
    )
    # Embedded redis-server only: its append-only file lives here and outlives the run.
    data_dir: Path = Field(default=Path(".quatro-data"), validation_alias=_env("QUATRO_DATA_DIR"))
    # Embedded head only: how many tables this node may host, and its object store size.
    table_slots: int = Field(default=200, validation_alias=_env("QUATRO_TABLE_SLOTS"))
    object_store_mb: int = Field(default=256, validation_alias=_env("QUATRO_OBJECT_STORE_MB"))
    ray_num_cpus: int = Field(default=2, validation_alias=_env("QUATRO_RAY_NUM_CPUS"))
    # Embedded only: Ray nodes on this machine, the head included; each offers `table_slots`.
    # More than one is for machines with more cores than one node's processes can use.
    local_nodes: int = Field(default=1, ge=1, validation_alias=_env("QUATRO_LOCAL_NODES"))
    # Ready table actors kept waiting so that creating a table answers at once (~0.6 s each).
    pool_size: int = Field(default=2, validation_alias=_env("QUATRO_POOL_SIZE"))
    session_ttl_s: int = Field(default=7 * 24 * 3600, validation_alias=_env("QUATRO_SESSION_TTL"))
    over_idle_s: float = Field(default=600.0, validation_alias=_env("QUATRO_OVER_IDLE"))
    # A lobby that nothing happens in (nobody joins, no bot added) stops: its actor holds a
    # slot and ~100 MB. A started table that nobody is connected to waits longer.
    lobby_idle_s: float = Field(default=600.0, validation_alias=_env("QUATRO_LOBBY_IDLE"))
    abandoned_idle_s: float = Field(default=1800.0, validation_alias=_env("QUATRO_ABANDONED_IDLE"))
    # A connection that says nothing (not even a pong) for this long is closed (R24).
    silence_s: float = Field(default=15.0, validation_alias=_env("QUATRO_SILENCE"))
    ping_interval_s: float = Field(default=5.0, validation_alias=_env("QUATRO_PING_INTERVAL"))
    max_frame_bytes: int = 64 * 1024
    send_queue: int = Field(default=512, validation_alias=_env("QUATRO_SEND_QUEUE"))
    # Flood guard: a token bucket per connection, far above legal play (R10 has no other limit).
    flood_rate: float = Field(default=30.0, validation_alias=_env("QUATRO_FLOOD_RATE"))
    flood_burst: float = Field(default=60.0, validation_alias=_env("QUATRO_FLOOD_BURST"))
    log_level: str = Field(default="info", validation_alias=_env("QUATRO_LOG_LEVEL"))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
