"""Every Redis client of Quatro is made here, from one setting: the gateway's, the table
actors', the launcher's and every script's, async or blocking, for one Redis or a Redis Cluster.

`REDIS_URL` names the store:

- one Redis: `redis://[user[:password]@]host:port[/db]`, `rediss://…` with TLS;
- a Redis Cluster: `redis+cluster://[user[:password]@]host:port[,host:port…]`, `rediss+cluster://…`
  with TLS: one or more seed nodes, the client learns the rest (a cluster has no db but 0).

Companion settings (environment, see cluster/settings.py): `REDIS_CA_FILE` (the PEM bundle that
verifies the server's certificate), `REDIS_CLIENT_CERT_FILE` and `REDIS_CLIENT_KEY_FILE` (mutual
TLS), and `REDIS_USERNAME`/`REDIS_PASSWORD`, which win over the URL's (a chart keeps the URL in a
ConfigMap and the password in a Secret). Secrets are never printed: `masked()` is what a log says.

Every client rides out a restart or a failover: a broken pooled connection is retried on a new
one, and a cluster client learns the new primary of a slot when asked (MOVED) or when a node is
out of reach.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, unquote

import redis
import redis.asyncio as aioredis
import redis.asyncio.cluster as aiocluster
import redis.cluster as synccluster
from redis._parsers import AsyncCommandsParser
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError
from redis.retry import Retry

# What the code holds: one Redis or a cluster, behind the same commands.
AsyncRedis = aioredis.Redis | aiocluster.RedisCluster
SyncRedis = redis.Redis | synccluster.RedisCluster

SCHEMES = {
    "redis": (False, False),
    "rediss": (True, False),
    "redis+cluster": (False, True),
    "rediss+cluster": (True, True),
}
DEFAULT_PORT = 6379


class BadRedisUrl(ValueError):
    """REDIS_URL cannot be read; the message never holds its password."""


@dataclass(frozen=True)
class RedisSettings:
    """Where the store is and how to reach it. Picklable: the gateway gives it to every table
    actor it starts (as it gave the URL before), so that a table reaches the same store."""

    url: str
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    # How many replicas a save that scores a point (or ends a match) waits for before the point
    # is published (`WAIT`), and how long at most: None is 1 on a cluster (each primary has a
    # replica), 0 on one Redis (`make run` has none; set 1 for a single Redis with a replica).
    wait_replicas: int | None = None
    wait_ms: int = 250

    def replicas_to_wait(self) -> int:
        if self.wait_replicas is not None:
            return self.wait_replicas
        return 1 if self.cluster else 0

    def parsed(self) -> Target:
        """The URL read, the companion settings applied. Raises BadRedisUrl."""
        target = parse_url(self.url)
        return replace(
            target,
            username=self.username or target.username,
            password=self.password or target.password,
            ca_file=self.ca_file,
            cert_file=self.cert_file,
            key_file=self.key_file,
        )

    @property
    def cluster(self) -> bool:
        return parse_url(self.url).cluster

    def masked(self) -> str:
        """The URL as a log may show it: no password, whichever way it was given."""
        return masked_url(self.url)

    def __str__(self) -> str:
        return self.masked()

    def portable(self) -> str | RedisSettings:
        """What a table actor is given: the bare URL when that is all there is, which table
        actors of the release before this one read too (a rolling upgrade); else this."""
        return self.url if self == RedisSettings(self.url) else self


def settings_of(store: str | RedisSettings) -> RedisSettings:
    """A bare URL (what older callers, and table actors of an older release, were given) is a
    store with no companion settings."""
    return store if isinstance(store, RedisSettings) else RedisSettings(store)


@dataclass(frozen=True)
class Target:
    """A REDIS_URL read: the nodes, whether it is a cluster, TLS, the credentials and the db."""

    nodes: tuple[tuple[str, int], ...]
    cluster: bool
    tls: bool
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None


def parse_url(url: str) -> Target:
    """`scheme://[user[:password]@]host:port[,host:port…][/db]`. Raises BadRedisUrl, which
    names the URL only masked."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise BadRedisUrl(
            f"REDIS_URL must start with redis://, rediss://, redis+cluster:// or "
            f"rediss+cluster://: {masked_url(url)!r}"
        )
    tls, cluster = SCHEMES[scheme.lower()]
    rest = rest.split("?", 1)[0]
    userinfo, at, hosts = rest.rpartition("@")
    if not at:
        userinfo, hosts = "", rest
    hosts, _, path = hosts.partition("/")
    username = password = None
    if userinfo:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    db = 0
    if path.strip("/"):
        try:
            db = int(path.strip("/"))
        except ValueError:
            raise BadRedisUrl(f"REDIS_URL's db must be a number: {masked_url(url)!r}") from None
    if cluster and db != 0:
        raise BadRedisUrl(f"a Redis Cluster has only db 0: {masked_url(url)!r}")
    nodes = tuple(_node(part, url) for part in hosts.split(",") if part.strip())
    if not nodes:
        raise BadRedisUrl(f"REDIS_URL names no host: {masked_url(url)!r}")
    if not cluster and len(nodes) > 1:
        raise BadRedisUrl(
            f"several hosts are for a cluster (redis+cluster://…): {masked_url(url)!r}"
        )
    return Target(nodes, cluster, tls, db, username, password)


def _node(part: str, url: str) -> tuple[str, int]:
    part = part.strip()
    if part.startswith("["):  # [v6]:port
        host, _, tail = part[1:].partition("]")
        port = tail.lstrip(":")
    else:
        host, _, port = part.rpartition(":") if ":" in part else (part, "", "")
    try:
        return host, int(port) if port else DEFAULT_PORT
    except ValueError:
        raise BadRedisUrl(f"REDIS_URL has a bad port: {masked_url(url)!r}") from None


def masked_url(url: str) -> str:
    """`url` with any password replaced by `***`."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "<not a URL>"
    userinfo, at, hosts = rest.rpartition("@")
    if not at:
        return url
    user, colon, _ = userinfo.partition(":")
    return f"{scheme}://{user}{':***' if colon else ''}@{hosts}"


def _tls(target: Target) -> dict[str, Any]:
    if not target.tls:
        if target.ca_file or target.cert_file:
            raise BadRedisUrl("REDIS_CA_FILE and client certificates need rediss:// (TLS)")
        return {}
    tls: dict[str, Any] = {"ssl": True, "ssl_cert_reqs": "required"}
    if target.ca_file:
        tls["ssl_ca_certs"] = target.ca_file
    if target.cert_file:
        tls["ssl_certfile"] = target.cert_file
        tls["ssl_keyfile"] = target.key_file
    return tls


def _common(target: Target, timeout_s: float, decode: bool) -> dict[str, Any]:
    return {
        "decode_responses": decode,
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
        "username": target.username,
        "password": target.password,
        "retry_on_error": [ConnectionError, TimeoutError, ConnectionResetError],
        **_tls(target),
    }


class _CancellableSend:
    """redis-py sends a command within `asyncio.wait_for` when a socket timeout is set, and on
    Python 3.11 `wait_for` drops a cancellation that arrives as the send completes (CPython
    gh-86296, mended in 3.12): the cancelled task then runs on, and an owner waiting for it
    waits forever (a table stopping, a hub closing). Sent within `asyncio.timeout` instead,
    which keeps it: `tests/store/test_redis_client.py` cancels commands at random moments."""

    socket_timeout: float | None

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        timeout, self.socket_timeout = self.socket_timeout, None  # the parent then sends as is
        try:
            async with asyncio.timeout(timeout):
                await super().send_packed_command(command, check_health)  # type: ignore[misc]
        except builtins.TimeoutError:
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
            raise TimeoutError("Timeout writing to socket") from None
        finally:
            self.socket_timeout = timeout


class _CommandTable(AsyncCommandsParser):
    """The server's command table, read once. redis-py's cluster client reads it again (COMMAND:
    some 240 entries parsed in Python, ~30 ms of CPU) with every refresh of its slot map, and it
    refreshes the map after every connection error: four times for each command sent while a
    lost primary is not yet replaced. On a loaded machine that read took a table actor 0.6-2.6 s
    (docs/reliability.md, "A lost primary, phase by phase"), so a save's 2 s budget ran out in
    it, again and again, long after the replica had taken over: the slot map does not change
    the commands. Read again only when a command is not in it (a server upgraded meanwhile,
    which is what the parent does with no node given)."""

    async def initialize(self, node: aiocluster.ClusterNode | None = None) -> None:
        if node is not None and self.commands:
            self.node = node  # a node of the new map: COMMAND GETKEYS goes there
            return
        await super().initialize(node)


class _Connection(_CancellableSend, aioredis.Connection):
    pass


class _SSLConnection(_CancellableSend, aioredis.SSLConnection):
    pass


def async_redis(
    store: str | RedisSettings, timeout_s: float = 5.0, decode: bool = True
) -> AsyncRedis:
    """The async client of the store (the gateway's, a table actor's)."""
    target = settings_of(store).parsed()
    kwargs = _common(target, timeout_s, decode)
    retry = AsyncRetry(ExponentialBackoff(cap=0.5, base=0.05), retries=3)
    connection = _SSLConnection if target.tls else _Connection
    if target.cluster:
        client = aiocluster.RedisCluster(
            startup_nodes=[aiocluster.ClusterNode(h, p) for h, p in target.nodes],
            retry=retry,
            **kwargs,
        )
        # The cluster client takes no connection class: its nodes, the known and the found,
        # are given ours before any connects.
        client.connection_kwargs["connection_class"] = connection
        for node in client.startup_nodes:
            node.connection_class = connection
        client.commands_parser = _CommandTable()
        return client
    host, port = target.nodes[0]
    kwargs.pop("retry_on_error")
    tls = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith("ssl")}
    tls.pop("ssl", None)
    pool = aioredis.ConnectionPool(
        connection_class=connection,
        host=host,
        port=port,
        db=target.db,
        health_check_interval=10,
        retry=retry,
        retry_on_error=[ConnectionError, TimeoutError, ConnectionResetError],
        **tls,
        **kwargs,
    )
    return aioredis.Redis(connection_pool=pool)


def sync_redis(
    store: str | RedisSettings, timeout_s: float = 5.0, decode: bool = True
) -> SyncRedis:
    """The blocking client of the store (a table actor's restore, the launcher, scripts)."""
    target = settings_of(store).parsed()
    kwargs = _common(target, timeout_s, decode)
    retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=3)
    if target.cluster:
        return synccluster.RedisCluster(
            startup_nodes=[synccluster.ClusterNode(h, p) for h, p in target.nodes],  # type: ignore[no-untyped-call]
            retry=retry,
            **kwargs,
        )
    host, port = target.nodes[0]
    return redis.Redis(host=host, port=port, db=target.db, retry=retry, **kwargs)


def url_of(nodes: list[tuple[str, int]], tls: bool = False, cluster: bool = False) -> str:
    """A REDIS_URL for these nodes (no credentials: give them as REDIS_USERNAME/PASSWORD)."""
    scheme = ("rediss" if tls else "redis") + ("+cluster" if cluster else "")
    hosts = ",".join(f"{quote(h)}:{p}" for h, p in nodes)
    return f"{scheme}://{hosts}" + ("" if cluster else "/0")


async def scan(client: AsyncRedis, match: str, rounds: int, count: int = 200) -> AsyncIterator[str]:
    """Keys matching `match`, from at most `rounds` SCAN calls on each primary (a bounded look
    at a keyspace that may be large): a cluster's keys are spread over its primaries."""
    if isinstance(client, aiocluster.RedisCluster):
        await client.initialize()
        for node in client.get_primaries():
            cursor = 0
            for _ in range(rounds):
                answer: Any = await client.scan(cursor, match=match, count=count, target_nodes=node)
                cursors, found = answer  # a cluster's SCAN: {node: cursor}, keys
                for key in found:
                    yield str(key)
                cursor = int(cursors[node.name])
                if cursor == 0:
                    break
        return
    cursor = 0
    for _ in range(rounds):
        cursor, found = await client.scan(cursor, match=match, count=count)
        for key in found:
            yield str(key)
        if cursor == 0:
            return


def scan_all(client: SyncRedis, match: str, count: int = 500) -> Iterator[str | bytes]:
    """Every key matching `match`, on every primary (the operator's commands)."""
    yield from client.scan_iter(match=match, count=count)
