"""One settings object, read from the environment once (`get_settings()` is cached).

Names follow what operators already use: `RAY_ADDRESS`, `REDIS_URL`, `PORT`; everything specific
to Quatro starts with `QUATRO_`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from cluster.redis_client import RedisSettings


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=False, extra="ignore", populate_by_name=True)

    ray_address: str | None = Field(default=None, validation_alias=_env("RAY_ADDRESS"))
    # The store (cluster/redis_client.py): one Redis (redis://, rediss://) or a Redis Cluster
    # (redis+cluster://host:port,host:port…, rediss+cluster://…). Unset: `make run` starts one.
    redis_url: str | None = Field(default=None, validation_alias=_env("REDIS_URL"))
    # TLS: the PEM bundle that verifies the server's certificate; a client certificate and key
    # for mutual TLS. Credentials (an ACL user) here win over the URL's, so that the URL can
    # live in a ConfigMap and the password in a Secret.
    redis_ca_file: str | None = Field(default=None, validation_alias=_env("REDIS_CA_FILE"))
    redis_cert_file: str | None = Field(
        default=None, validation_alias=_env("REDIS_CLIENT_CERT_FILE")
    )
    redis_key_file: str | None = Field(default=None, validation_alias=_env("REDIS_CLIENT_KEY_FILE"))
    redis_username: str | None = Field(default=None, validation_alias=_env("REDIS_USERNAME"))
    redis_password: SecretStr | None = Field(default=None, validation_alias=_env("REDIS_PASSWORD"))
    # A save that scores a point or ends a match waits for this many replicas to have it before
    # the point is published (unset: 1 on a cluster, 0 on one Redis), at most this long.
    redis_wait_replicas: int | None = Field(
        default=None, ge=0, le=5, validation_alias=_env("QUATRO_REDIS_WAIT_REPLICAS")
    )
    redis_wait_ms: int = Field(
        default=250, ge=1, le=5000, validation_alias=_env("QUATRO_REDIS_WAIT_MS")
    )
    # Embedded only: `make run` starts a local Redis Cluster (3 primaries, 3 replicas) instead
    # of its one redis-server.
    redis_cluster: bool = Field(default=False, validation_alias=_env("QUATRO_REDIS_CLUSTER"))
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
    # Ready table actors kept waiting so that creating a table answers at once (~0.6 s each):
    # at least `pool_min` per gateway (QUATRO_POOL_MIN, or the older QUATRO_POOL_SIZE), plus the
    # tables it opened in the last 10 s, up to `pool_max` (actors.pool).
    pool_size: int = Field(default=2, ge=0, validation_alias=_env("QUATRO_POOL_SIZE"))
    pool_min_setting: int | None = Field(
        default=None, ge=0, validation_alias=_env("QUATRO_POOL_MIN")
    )
    pool_max_setting: int = Field(default=8, ge=0, validation_alias=_env("QUATRO_POOL_MAX"))
    # New table actors a gateway starts side by side: each is a worker process, and a node
    # starts only a few at once (Ray's startup concurrency: its CPU count) without thrashing.
    pool_starts: int = Field(default=2, ge=1, validation_alias=_env("QUATRO_POOL_STARTS"))
    # How long a creation waits for a ready actor when the pool is empty (a burst), before
    # `503 unavailable`; a full cluster answers `503 no_room` at once instead.
    pool_wait_s: float = Field(default=30.0, gt=0, validation_alias=_env("QUATRO_POOL_WAIT"))
    # Seconds without a creation before the pool grows its buffer back (0: at once): a ramp then
    # takes the actors started ahead and starts a process only for a creation that finds none.
    # 3 s and the 2 s gap below won the A/B of docs/performance.md (2026-12-02).
    pool_quiet_s: float = Field(
        default=3.0, ge=0, le=10, validation_alias=_env("QUATRO_POOL_QUIET")
    )
    # Seconds between the end of one start for the buffer and the next (0: unpaced, up to
    # `pool_starts` side by side): a start beside tables in play costs them, a flock of them
    # costs them seconds. Creations that find the pool empty are never paced.
    pool_start_gap_s: float = Field(
        default=2.0, ge=0, le=60, validation_alias=_env("QUATRO_POOL_START_GAP")
    )
    # Ready table actors kept ahead of a known peak, whatever the demand (actors/pool_floor.py):
    # a count, or windows of the day in UTC, "18:30-23:00=40,12:00-13:30=10". An operator sets
    # one for a single event with `python -m actors.pool_floor set N --for 3h` instead.
    pool_floor: str = Field(default="", validation_alias=_env("QUATRO_POOL_FLOOR"))
    # For this long after a creation, the surplus trim keeps up to `pool_hold_max` of the
    # actors the last wave of tables gives back as they end (actors/pool_demand.py): their
    # players form the next tables within minutes, and a kept actor spares a start then. The
    # maximum bounds what they hold (a slot and ~50 MB each); 0 turns the hold off.
    pool_hold_s: float = Field(default=300.0, ge=0, validation_alias=_env("QUATRO_POOL_HOLD"))
    pool_hold_max: int = Field(default=24, ge=0, validation_alias=_env("QUATRO_POOL_HOLD_MAX"))
    # Free table slots no new table may take (actors.slots): room for crashed tables to restart
    # and for what other gateways started since this one last looked. Past it: 503 `no_room`.
    slot_reserve: int = Field(default=4, ge=0, validation_alias=_env("QUATRO_SLOT_RESERVE"))
    # The table slots Ray's autoscaler may grow the cluster to (0: it cannot grow). Below it, new
    # tables wait in Ray instead: that demand is what adds a worker.
    max_table_slots: int = Field(default=0, ge=0, validation_alias=_env("QUATRO_MAX_TABLE_SLOTS"))
    session_ttl_s: int = Field(default=7 * 24 * 3600, validation_alias=_env("QUATRO_SESSION_TTL"))
    over_idle_s: float = Field(default=600.0, validation_alias=_env("QUATRO_OVER_IDLE"))
    # A lobby that nothing happens in (nobody joins, no bot added) stops: its actor holds a
    # slot and ~100 MB. A started table that nobody is connected to waits longer.
    lobby_idle_s: float = Field(default=600.0, validation_alias=_env("QUATRO_LOBBY_IDLE"))
    abandoned_idle_s: float = Field(default=1800.0, validation_alias=_env("QUATRO_ABANDONED_IDLE"))
    # A started or finished table whose people have all gone from it for good (no connection,
    # and each left it or sits at another table now: actors/departures.py) stops this long
    # after that was first seen, if its own wait above is longer: its actor then serves the next
    # table. A player who only lost their link is not gone: their table keeps its wait above.
    left_idle_s: float = Field(default=20.0, ge=0, validation_alias=_env("QUATRO_LEFT_IDLE"))
    # A table (lobby, match in play or finished) that no person has been connected to for this
    # long parks: saved, marked parked, its actor back in the pool; the next call about it (a
    # hello, a watcher, a REST call) wakes it in a ready actor (actors/parking.py). Long enough
    # that a reload or a phone between networks never parks a table someone is looking at; it
    # ends nothing: the waits above still end a parked table. 0: tables never park.
    park_after_s: float = Field(default=45.0, ge=0, validation_alias=_env("QUATRO_PARK_AFTER"))
    # How long a table's event log stays in Redis for `GET /api/replays/{table_id}`, counted from
    # the table's last event (so it outlives the table, which stops minutes after the match).
    replay_ttl_s: int = Field(
        default=7 * 24 * 3600, ge=60, validation_alias=_env("QUATRO_REPLAY_TTL")
    )
    # Quick play: a public table that still has empty seats this long after its first player
    # sat down gets bots in them and starts (the engine does it; see engine/lobby.py).
    quick_fill_s: float = Field(
        default=60.0, gt=0, le=3600, validation_alias=_env("QUATRO_QUICK_FILL_S")
    )
    # A connection that says nothing (not even a pong) for this long is closed (R24).
    silence_s: float = Field(default=15.0, validation_alias=_env("QUATRO_SILENCE"))
    ping_interval_s: float = Field(default=5.0, validation_alias=_env("QUATRO_PING_INTERVAL"))
    # An idle HTTP keep-alive connection is closed after this long. It must outlast the idle
    # timeout of every client and proxy in front (httpx 5 s, ingress-nginx and AWS ALB 60 s):
    # a request written on a connection as the server closes it gets no answer (a 502 behind a
    # proxy). uvicorn's own default, 5 s, raced httpx's pool expiry exactly.
    keep_alive_s: int = Field(default=75, ge=1, le=3600, validation_alias=_env("QUATRO_KEEP_ALIVE"))
    max_frame_bytes: int = 64 * 1024
    send_queue: int = Field(default=512, validation_alias=_env("QUATRO_SEND_QUEUE"))
    # Flood guard: a token bucket per connection, far above legal play (R10 has no other limit).
    flood_rate: float = Field(default=30.0, validation_alias=_env("QUATRO_FLOOD_RATE"))
    flood_burst: float = Field(default=60.0, validation_alias=_env("QUATRO_FLOOD_BURST"))
    log_level: str = Field(default="info", validation_alias=_env("QUATRO_LOG_LEVEL"))

    # -- the edge (docs/security-edge.md) ---------------------------------------------------------
    # Every REST body is refused with 413 past this size, before the rest is read.
    max_body_bytes: int = Field(default=16 * 1024, validation_alias=_env("QUATRO_MAX_BODY"))
    # Comma-separated CIDRs of reverse proxies whose X-Forwarded-For is believed; empty: the
    # peer address is the client's.
    trusted_proxies: str = Field(default="", validation_alias=_env("QUATRO_TRUSTED_PROXIES"))
    # Host headers served (comma-separated, `*.example.com` allowed; `*` serves any). Empty:
    # the loopback names when the gateway listens on loopback (`make run`), else any (a pod is
    # reached by its IP and the ingress host; set it to the ingress host there).
    trusted_hosts: str = Field(default="", validation_alias=_env("QUATRO_TRUSTED_HOSTS"))
    # Origins a browser may open /ws from, besides the gateway's own and localhost (any port).
    ws_origins: str = Field(default="", validation_alias=_env("QUATRO_WS_ORIGINS"))
    # /metrics and /docs on the public port (today's behaviour), and/or on an internal one.
    public_metrics: bool = Field(default=True, validation_alias=_env("QUATRO_PUBLIC_METRICS"))
    docs: bool = Field(default=True, validation_alias=_env("QUATRO_DOCS"))
    internal_port: int | None = Field(default=None, validation_alias=_env("QUATRO_INTERNAL_PORT"))
    # Cells (docs/scaling.md): the cell whose Ray this gateway drives ("" : no cells, every key
    # and record as before), and the host:port other cells' gateways reach its internal port at
    # (default: HOST and QUATRO_INTERNAL_PORT, which a cell needs).
    cell: str = Field(
        default="", pattern=r"^([a-z0-9][a-z0-9-]{0,31})?$", validation_alias=_env("QUATRO_CELL")
    )
    cell_address: str = Field(default="", validation_alias=_env("QUATRO_CELL_ADDRESS"))
    # Quotas, per client IP, shared by every replica through Redis: a token bucket each
    # (`rate` a second, bursts of `burst`). The test suite and the load tests, which create
    # hundreds of sessions and tables from 127.0.0.1 within minutes, lift them.
    # New sessions (issue 47): each makes a profile, kept until its sessions expire, so the
    # quota is what one address of people needs, not what a script could use: a class of 30
    # arriving together, each with a new session or a passkey's sign-in (two calls: 60); a
    # household needs a few. After that, one a minute: the 31st pupil of a class waits a minute.
    session_rate: float = Field(default=1 / 60, validation_alias=_env("QUATRO_SESSION_RATE"))
    session_burst: float = Field(default=60.0, validation_alias=_env("QUATRO_SESSION_BURST"))
    table_rate: float = Field(default=5.0, validation_alias=_env("QUATRO_TABLE_RATE"))
    table_burst: float = Field(default=150.0, validation_alias=_env("QUATRO_TABLE_BURST"))
    # GET /api/tables/{code}: enough for a lobby page's polling, far too few to scan codes.
    lookup_rate: float = Field(default=20.0, validation_alias=_env("QUATRO_LOOKUP_RATE"))
    lookup_burst: float = Field(default=200.0, validation_alias=_env("QUATRO_LOOKUP_BURST"))
    # Per player (issue 36): reports of another's name, and a host's freeing of seats (kicks).
    report_rate: float = Field(default=0.1, validation_alias=_env("QUATRO_REPORT_RATE"))
    report_burst: float = Field(default=5.0, validation_alias=_env("QUATRO_REPORT_BURST"))
    kick_rate: float = Field(default=0.2, validation_alias=_env("QUATRO_KICK_RATE"))
    kick_burst: float = Field(default=10.0, validation_alias=_env("QUATRO_KICK_BURST"))
    # Where a profile's sessions come from (issue 47, gateway/address_tags.py): a keyed hash of
    # each address, never the address, so that two profiles of one person at one table rate
    # nobody and one person's reports count once. The key: this secret, which every gateway of
    # a deployment must share (unset: one derived from the Ray token, which they all share
    # already). Off (`QUATRO_ADDRESS_TAGS=0`): every session is taken to come from an address
    # of its own — only where every player shares one address on purpose (the test suite, load
    # tests, all on 127.0.0.1).
    address_key: SecretStr | None = Field(default=None, validation_alias=_env("QUATRO_ADDRESS_KEY"))
    address_tags: bool = Field(default=True, validation_alias=_env("QUATRO_ADDRESS_TAGS"))
    # Passkeys (WebAuthn): the relying party's id, the site's domain ("" : the host the browser
    # asked, e.g. quatro.example or localhost); a passkey works on that domain and its subdomains.
    passkey_rp_id: str = Field(default="", validation_alias=_env("QUATRO_PASSKEY_RP_ID"))
    # Tables a player created that are still in their lobby (each is a ~105 MB process).
    max_open_lobbies: int = Field(default=3, validation_alias=_env("QUATRO_MAX_OPEN_LOBBIES"))
    # WebSocket connections per gateway process: per client IP and in all.
    max_conns_per_ip: int = Field(default=1000, validation_alias=_env("QUATRO_MAX_CONNS_PER_IP"))
    max_conns: int = Field(default=20000, validation_alias=_env("QUATRO_MAX_CONNS"))
    # A REST route waits this long for a table actor, then answers 503 `unavailable`.
    actor_timeout_s: float = Field(default=15.0, validation_alias=_env("QUATRO_ACTOR_TIMEOUT"))
    # A REST call to one table (look, seat, act) waits this long, through a restart of its
    # actor (Ray's, on a loaded node; a lost node's tables are moved in seconds: rescue.py), as
    # commands over the socket do (actors.directory.RESTART_WAIT_S); then 503 `unavailable`.
    table_wait_s: float = Field(default=40.0, validation_alias=_env("QUATRO_TABLE_WAIT"))
    # A table whose node is lost (its actor and the node's raylet refuse connections) is moved
    # to a live node at once (actors/rescue.py) instead of waiting for Ray's verdict.
    node_rescue: bool = Field(default=True, validation_alias=_env("QUATRO_NODE_RESCUE"))
    # The gateway ↔ table traffic of play: `socket` (a TCP connection per table, the data
    # plane) or `ray` (Ray calls and streaming generators, the path before it; for A/B runs).
    data_plane: str = Field(default="socket", validation_alias=_env("QUATRO_DATA_PLANE"))
    # A data-plane connection pings this often, and is given up after this long unheard.
    link_heartbeat_s: float = Field(default=5.0, validation_alias=_env("QUATRO_LINK_HEARTBEAT"))
    link_dead_after_s: float = Field(default=15.0, validation_alias=_env("QUATRO_LINK_DEAD_AFTER"))
    # `Retry-After` of a 503 (Redis or a table out of reach).
    retry_after_s: int = Field(default=5, validation_alias=_env("QUATRO_RETRY_AFTER"))
    # A connection still over its flood guard after this many refused frames is closed (1008).
    flood_strikes: int = Field(default=100, validation_alias=_env("QUATRO_FLOOD_STRIKES"))

    def store(self) -> RedisSettings:
        """The store and how to reach it (REDIS_URL and its companions). Raises RuntimeError
        when REDIS_URL is not set."""
        if not self.redis_url:
            raise RuntimeError("REDIS_URL is not set (python -m cluster up sets it)")
        return RedisSettings(
            url=self.redis_url,
            ca_file=self.redis_ca_file,
            cert_file=self.redis_cert_file,
            key_file=self.redis_key_file,
            username=self.redis_username,
            password=self.redis_password.get_secret_value() if self.redis_password else None,
            wait_replicas=self.redis_wait_replicas,
            wait_ms=self.redis_wait_ms,
        )

    @property
    def pool_min(self) -> int:
        return self.pool_size if self.pool_min_setting is None else self.pool_min_setting

    @property
    def pool_max(self) -> int:
        return max(self.pool_min, self.pool_max_setting)

    def internal_address(self) -> str:
        """Where other cells' gateways reach this one's internal port."""
        if self.cell_address:
            return self.cell_address
        if self.internal_port is None:
            raise RuntimeError("QUATRO_CELL needs QUATRO_INTERNAL_PORT (or QUATRO_CELL_ADDRESS)")
        return f"{self.host}:{self.internal_port}"

    def csv(self, value: str) -> list[str]:
        return [item.strip() for item in value.split(",") if item.strip()]

    def allowed_hosts(self) -> list[str]:
        if self.trusted_hosts.strip():
            return self.csv(self.trusted_hosts)
        if self.host in ("127.0.0.1", "localhost", "::1"):
            return ["localhost", "127.0.0.1", "::1", "[::1]"]
        return ["*"]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
