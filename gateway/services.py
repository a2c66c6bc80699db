"""What the gateway connects to, built once at startup and closed at shutdown."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from actors.cells import Registry
from actors.directory import Directory, DirectorySettings
from actors.rating_fix import RatingFix
from actors.tasks import Tasks
from cluster.connect import connect_ray
from cluster.link_secret import link_secret
from cluster.redis_client import AsyncRedis, async_redis
from cluster.settings import Settings
from gateway import metrics
from gateway.address_tags import AddressTags
from gateway.cells import HttpCells
from gateway.client_ip import Network, networks
from gateway.conn_caps import ConnectionCaps
from gateway.guest_migration import GuestMigration
from gateway.guests import Guests
from gateway.hubs import Hubs, LinkFactory
from gateway.leaderboards import Leaderboards
from gateway.lobbies import OpenLobbies
from gateway.newcomers import Newcomers
from gateway.passkeys import Passkeys
from gateway.profiles import Profiles
from gateway.quickplay import QuickQueue
from gateway.rate_limit import Bucket, RateLimits
from gateway.replay_cache import ReplayCache
from gateway.reports import Reports
from gateway.sessions import Sessions
from gateway.table_link import RayLink, SocketLink

log = logging.getLogger("quatro.gateway")


@dataclass
class Services:
    settings: Settings
    gateway: str  # this process's id: names its subscriptions and its connections
    redis: AsyncRedis
    sessions: Sessions
    profiles: Profiles
    guests: Guests
    reports: Reports
    tags: AddressTags  # where sessions come from, as a keyed hash (issue 47)
    newcomers: Newcomers
    leaderboards: Leaderboards
    passkeys: Passkeys
    directory: Directory
    hubs: Hubs
    limits: RateLimits
    lobbies: OpenLobbies
    quick: QuickQueue
    caps: ConnectionCaps
    replays: ReplayCache
    proxies: tuple[Network, ...]  # trusted reverse proxies (X-Forwarded-For)
    origins: frozenset[str]  # extra origins allowed to open /ws
    remote: HttpCells | None = None  # how this gateway asks other cells' (None: no cells)
    tasks: Tasks = field(default_factory=lambda: Tasks("gateway"))  # its own background work

    @classmethod
    def start(cls, settings: Settings) -> Services:
        store = settings.store()  # raises when REDIS_URL is not set
        if settings.test_hooks:
            log.warning("QUATRO_TEST_HOOKS=1: test hooks are ON (rigged deals, fast clocks)")
        connect_ray(settings)
        redis = async_redis(store)
        log.info("the store: %s", store.masked())
        gateway = f"gw-{uuid.uuid4().hex[:10]}"
        registry, remote = _cells(settings, redis)
        directory = Directory(redis, DirectorySettings.of(settings), registry, remote)
        # Read at each scrape (from the internal port's thread too): plain attributes.
        metrics.POOL_TARGET.set_function(lambda: directory.pool.last_target)
        metrics.POOL_STARTING.set_function(lambda: directory.pool.starting)
        metrics.POOL_WAITING.set_function(lambda: directory.pool.waiting)
        metrics.POOL_READY.set_function(lambda: directory.pool.ready)
        metrics.POOL_FLOOR.set_function(lambda: directory.pool.floor.last)
        metrics.POOL_PARKED.set_function(lambda: directory.waking.parked)
        metrics.POOL_COUNTS.read = lambda: (
            directory.pool.started,
            directory.pool.served,
            directory.waking.woken,
            directory.waking.followed,
        )
        tags = _address_tags(settings)
        profiles = Profiles(redis)
        return cls(
            settings=settings,
            gateway=gateway,
            redis=redis,
            sessions=Sessions(redis, settings.session_ttl_s, tags),
            profiles=profiles,
            guests=Guests(redis, settings.session_ttl_s),
            reports=Reports(redis, profiles),
            tags=tags,
            newcomers=Newcomers(redis),
            leaderboards=Leaderboards(redis),
            passkeys=Passkeys(redis, settings.passkey_rp_id),
            directory=directory,
            hubs=Hubs(directory, _links(settings, directory, gateway), gateway),
            limits=RateLimits(
                redis,
                {
                    "session": Bucket(settings.session_rate, settings.session_burst),
                    "table": Bucket(settings.table_rate, settings.table_burst),
                    "lookup": Bucket(settings.lookup_rate, settings.lookup_burst),
                    # Per player, not per IP (gateway/profiles.py, the host's kick).
                    "report": Bucket(settings.report_rate, settings.report_burst),
                    "kick": Bucket(settings.kick_rate, settings.kick_burst),
                },
            ),
            lobbies=OpenLobbies(redis, settings.max_open_lobbies, int(settings.lobby_idle_s) + 60),
            quick=QuickQueue(redis),
            caps=ConnectionCaps(settings.max_conns_per_ip, settings.max_conns),
            replays=ReplayCache(),
            proxies=networks(settings.csv(settings.trusted_proxies)),
            origins=frozenset(o.lower().rstrip("/") for o in settings.csv(settings.ws_origins)),
            remote=remote,
        )

    def keep_ratings_right(self) -> None:
        """Issue 46: the ratings that matches against bots alone changed are put right, by the
        first gateway of this release that finds them, now and every 10 minutes while the
        workers of the release before may still apply some (actors/rating_fix.py)."""
        self.tasks.spawn(RatingFix(self.redis, self.gateway).keep(), "rating-fix")

    def judge_older_profiles(self) -> None:
        """Issue 47: the profiles made before guests expired are judged once, lasting or a
        guest's, by the first gateway of this release that finds them not judged
        (gateway/guest_migration.py)."""
        migration = GuestMigration(self.redis, self.gateway, self.settings.session_ttl_s)
        self.tasks.spawn(migration.keep(), "guest-migration")

    async def close(self) -> None:
        await self.tasks.close()
        await self.hubs.close()
        await self.directory.close()
        if self.remote is not None:
            await self.remote.close()
        await self.redis.aclose()


def _address_tags(settings: Settings) -> AddressTags:
    """Tags keyed by `QUATRO_ADDRESS_KEY`, else by the Ray token every gateway shares; none
    when turned off (every player on one address on purpose: tests, load tests)."""
    if not settings.address_tags:
        log.warning("QUATRO_ADDRESS_TAGS=0: sessions' addresses are not told apart")
        return AddressTags(None)
    if settings.address_key is not None:
        return AddressTags.derived(settings.address_key.get_secret_value())
    return AddressTags.derived(link_secret(settings.store()))


def _cells(settings: Settings, redis: AsyncRedis) -> tuple[Registry | None, HttpCells | None]:
    """The cell registry and the way to other cells' gateways; None, None without a cell. Every
    cell of a fleet shares one link secret (the Ray token: give each cell's Ray the same one),
    since a gateway of one cell follows tables of the others over their links."""
    if not settings.cell:
        return None, None
    if settings.data_plane != "socket":
        raise RuntimeError("cells need the data plane (QUATRO_DATA_PLANE=socket)")
    registry = Registry(redis, settings.cell, settings.internal_address(), settings.slot_reserve)
    log.info("cell %s: other cells reach this gateway at %s", settings.cell, registry.internal)
    return registry, HttpCells(link_secret(settings.store()))


def _links(settings: Settings, directory: Directory, gateway: str) -> LinkFactory:
    if settings.data_plane == "ray":
        log.warning("QUATRO_DATA_PLANE=ray: play goes through Ray calls (the path for A/B runs)")
        return lambda code: RayLink(code, directory, gateway)
    if settings.data_plane != "socket":
        raise RuntimeError(f"QUATRO_DATA_PLANE must be socket or ray, not {settings.data_plane!r}")
    secret = link_secret(settings.store())
    return lambda code: SocketLink(
        code,
        directory,
        gateway,
        secret,
        settings.link_heartbeat_s,
        settings.link_dead_after_s,
    )
