"""One setting for any Redis: REDIS_URL read for one Redis or a cluster, its companions
(REDIS_CA_FILE, client certificates, REDIS_USERNAME/REDIS_PASSWORD), and the one factory that
builds every client, tried against real redis-servers with TLS, mutual TLS and an ACL user, and
a Redis Cluster with TLS. The gateway's rooms and the table's core run on each as they do in
production; a secret never shows in an error or a log line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from pydantic import SecretStr

from actors import keys
from actors.table_core import TableCore
from cluster.link_secret import link_secret
from cluster.procs import RedisServer, free_port
from cluster.redis_client import (
    BadRedisUrl,
    RedisSettings,
    async_redis,
    masked_url,
    parse_url,
    sync_redis,
)
from cluster.redis_cluster import LocalRedisCluster
from cluster.settings import Settings
from cluster.tls_files import TlsFiles, make_tls_files
from gateway.sessions import Sessions
from tests.actors.test_table_core import Clock, act

SECRET = "pässwörd-123"  # not URL-safe on purpose: given apart from the URL
ACL_USER = "quatro"


def test_one_redis_and_a_cluster_are_read_from_one_setting() -> None:
    one = parse_url("redis://127.0.0.1:6380/2")
    assert (one.nodes, one.cluster, one.tls, one.db) == ((("127.0.0.1", 6380),), False, False, 2)
    assert parse_url("rediss://user:pw@redis.example:6379").tls
    seeds = parse_url("rediss+cluster://u:p@redis-0.redis:6379,redis-1.redis:6379,redis-2.redis")
    assert seeds.cluster
    assert seeds.tls
    assert seeds.nodes == (
        ("redis-0.redis", 6379),
        ("redis-1.redis", 6379),
        ("redis-2.redis", 6379),
    )
    assert (seeds.username, seeds.password) == ("u", "p")
    assert parse_url("redis+cluster://[::1]:7000").nodes == (("::1", 7000),)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("redis+cluster://h:1,h:2/3", "only db 0"),
        ("redis://a:1,b:2/0", "several hosts are for a cluster"),
        ("http://u:hunter2@h:1", "must start with"),
        ("redis://u:hunter2@h:port", "bad port"),
    ],
)
def test_a_bad_url_is_refused_without_its_password(url: str, why: str) -> None:
    with pytest.raises(BadRedisUrl, match=why) as refused:
        parse_url(url)
    assert "hunter2" not in str(refused.value)


def test_companion_settings_win_over_the_url_and_the_password_never_shows() -> None:
    settings = Settings(
        redis_url="redis://olduser:oldpw@10.0.0.1:6379/0",
        redis_username=ACL_USER,
        redis_password=SecretStr(SECRET),
    )
    store = settings.store()
    target = store.parsed()
    assert (target.username, target.password) == (ACL_USER, SECRET)
    assert SECRET not in repr(store)
    assert "oldpw" not in str(store)
    assert masked_url("rediss://u:p@h:1/0") == "rediss://u:***@h:1/0"
    # Given to a table actor: a bare URL when that is all there is (actors of the release before
    # this one read that), else the whole of it.
    assert RedisSettings("redis://h:1/0").portable() == "redis://h:1/0"
    assert store.portable() == store
    assert RedisSettings("redis+cluster://h:1").replicas_to_wait() == 1
    assert RedisSettings("redis://h:1/0").replicas_to_wait() == 0


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_redis(tls: TlsFiles) -> Iterator[RedisServer]:
    """TLS only, a client certificate required (mutual TLS), and an ACL user that may touch only
    Quatro's keys (the default user is off)."""
    port = free_port()
    acl = ["--user", "default", "off", "--user", ACL_USER, "on", f">{SECRET}", "~quatro:*", "&*"]
    server = RedisServer(port=port, extra=[*tls.server_args(port, clients="yes"), *acl, "+@all"])
    server.start()
    try:
        yield server
    finally:
        server.cleanup()


def tls_store(
    server: RedisServer, tls: TlsFiles, ca_file: str = "", password: str = SECRET
) -> RedisSettings:
    return RedisSettings(
        url=f"rediss://{ACL_USER}@127.0.0.1:{server.port}/0",
        ca_file=ca_file or str(tls.ca),
        cert_file=str(tls.client_cert),
        key_file=str(tls.client_key),
        password=password,
    )


async def test_the_gateway_and_a_table_over_tls_with_an_acl_user(
    tls_redis: RedisServer, tls: TlsFiles
) -> None:
    store = tls_store(tls_redis, tls)
    client = async_redis(store)
    try:
        sessions = Sessions(client, 3600)
        token, session = await sessions.create("Ann")
        assert await sessions.lookup(token) == session
        core = TableCore("table-7150", store, now=Clock())
        assert (await core.open("TLS1", {"players": 4}, "p0", "Ann", (600.0, 600.0))).ok
        await core.serve(act("p0", "add_bot", seat=1))
        again = TableCore("table-7150", store, now=Clock())  # restored with the blocking client
        assert again.table is not None
        assert again.feed.seq == core.feed.seq
        await again.stop()
        await core.stop()
        assert len(link_secret(store)) == 64  # the blocking client of a process's startup
        assert json.loads(str(await client.get(keys.snapshot("TLS1"))))["seq"] == core.feed.seq
    finally:
        await client.aclose()


def test_a_wrong_credential_or_certificate_is_refused_and_says_no_secret(
    tls_redis: RedisServer, tls: TlsFiles, tmp_path: Path
) -> None:
    wrong = tls_store(tls_redis, tls, password="not-it-" + SECRET[::-1])
    with pytest.raises(redis.AuthenticationError) as refused:
        sync_redis(wrong, timeout_s=3).ping()
    assert SECRET[::-1] not in str(refused.value)
    no_client_cert = RedisSettings(wrong.url, ca_file=str(tls.ca), password=SECRET)
    with pytest.raises(redis.ConnectionError):
        sync_redis(no_client_cert, timeout_s=3).ping()
    plain = RedisSettings(f"redis://{ACL_USER}@127.0.0.1:{tls_redis.port}/0", password=SECRET)
    with pytest.raises(redis.ConnectionError):
        sync_redis(plain, timeout_s=3).ping()
    other = make_tls_files(tmp_path / "other")  # a server certificate no CA of ours vouches for
    with pytest.raises(redis.ConnectionError, match="certificate verify failed"):
        sync_redis(tls_store(tls_redis, tls, ca_file=str(other.ca)), timeout_s=3).ping()


async def test_a_cluster_over_tls(tls: TlsFiles) -> None:
    """What a managed Redis in cluster mode offers: `rediss+cluster://` and a CA file."""
    cluster = LocalRedisCluster(primaries=3, replicas=0, tls=tls).start()
    store = RedisSettings(cluster.url, ca_file=str(tls.ca))
    client = async_redis(store)
    try:
        sessions = Sessions(client, 3600)
        token, session = await sessions.create("Bea")
        assert await sessions.lookup(token) == session
        core = TableCore("table-7151", store, now=Clock())
        assert (await core.open("TLS2", {"players": 4}, "p0", "Bea", (600.0, 600.0))).ok
        again = TableCore("table-7151", store, now=Clock())
        assert again.feed.seq == core.feed.seq
        await again.stop()
        await core.stop()
    finally:
        await client.aclose()
        cluster.cleanup()
