"""Shared fixtures for the tests that need the real cluster: a redis-server and a Ray head of our
own (own temp dir, own ports, stopped by PID — never `ray stop`; token authentication on, with the
head's own token, and every Ray listener on loopback, as `make run` has it), and two real uvicorn
gateways in subprocesses on free ports, all started once per session and shared. The stack is
built by cluster/stack.py, as the load tests' are."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest
import redis

from actors import keys
from cluster.gateway_process import ROOT as ROOT
from cluster.gateway_process import GatewayProcess
from cluster.stack import Spec
from cluster.stack import Stack as Stack
from tests.background import Background
from tests.lanes import in_lane_worker, in_worker, lane_of, on_sigterm

Gateway = GatewayProcess  # the tests' name for it


BACKGROUND = pytest.StashKey[dict[str, Background]]()
BACKGROUND_DIR = pytest.StashKey[Path]()
STARTED = pytest.StashKey[bool]()  # this xdist worker has started its lane's background runs


def _order(item: pytest.Item) -> float:
    """0: tests with no stack (pure CPU, no clock to miss), first, beside the background runs;
    1: those that use the session's stack or one of their own, the `late` ones (long, CPU-bound
    and patient) after the others; 2: `destructive` ones; 3: the `background` ones, which judge
    runs started with the session."""
    if item.get_closest_marker("background"):
        return 3
    if item.get_closest_marker("destructive"):
        return 2
    if item.get_closest_marker("late"):
        return 1.5
    needs = {"stack", "stack_url", "browser", "playwright", "static_url"}
    marked = item.get_closest_marker("cluster") or item.get_closest_marker("browser")
    return 1 if marked or needs & set(getattr(item, "fixturenames", ())) else 0


@pytest.hookimpl(trylast=True)  # after the folders' conftests have marked their tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_order)  # stable: each group keeps the files' order


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start each module's background run (its `background_run(out)`) once the session knows
    one of its tests will run: it then runs beside the whole session. An xdist worker collects
    every test but runs one lane: it starts its lane's runs when its first test arrives."""
    if session.config.option.collectonly or in_worker(session.config):
        return
    _start_background(session, None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    config = item.config
    # In a worker of another distribution (plain `-n 2`) its module's tests start it when they
    # come: the first test says nothing of which tests this worker will get.
    if in_lane_worker(config) and STARTED not in config.stash:
        config.stash[STARTED] = True
        _start_background(item.session, lane_of(item.nodeid))


def _start_background(session: pytest.Session, only: str | None) -> None:
    runs = session.config.stash.setdefault(BACKGROUND, {})
    for item in session.items:
        module = getattr(item, "module", None)
        if not item.get_closest_marker("background") or module is None:
            continue
        if only is not None and lane_of(item.nodeid) != only:
            continue
        if module.__name__ not in runs:
            start: Callable[[Path], Background] = module.background_run
            runs[module.__name__] = start(_background_dir(session.config, module.__name__)).start()


def _background_dir(config: pytest.Config, name: str) -> Path:
    if BACKGROUND_DIR not in config.stash:
        config.stash[BACKGROUND_DIR] = Path(tempfile.mkdtemp(prefix="quatro-background-"))
    return config.stash[BACKGROUND_DIR] / name.rsplit(".", 1)[-1]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop what a session that ended early left running; keep the runs' output when a test
    failed."""
    for run in session.config.stash.get(BACKGROUND, {}).values():
        run.stop()
    folder = session.config.stash.get(BACKGROUND_DIR, None)
    if folder is not None and not session.testsfailed:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def background(request: pytest.FixtureRequest) -> Background:
    """The run of the requesting module, started with the session (`background_run`)."""
    runs = request.config.stash.setdefault(BACKGROUND, {})
    name = request.module.__name__
    if name not in runs:  # a session that did not collect it first (--collect-only, a plugin)
        start: Callable[[Path], Background] = request.module.background_run
        runs[name] = start(_background_dir(request.config, name)).start()
    return runs[name]


def pytest_configure(config: pytest.Config) -> None:
    """A SIGTERM (a CI's timeout, `kill`) ends the run as Ctrl-C does: pytest then tears down
    what the tests started — the session's stack (redis-server, Ray head, gateways), the
    browser, a test's own stack — instead of dying and leaving all of it running."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)
    if config.pluginmanager.hasplugin("xdist"):
        from tests.lanes import Lanes  # xdist present: its hooks are known

        config.pluginmanager.register(Lanes(), "quatro-lanes")


def suite_spec(namespace: str) -> Spec:
    """The suite's stack. ~110 MB RSS per live table actor: 112 slots stay within a CI
    machine's memory, and keep the suite's busiest minutes (quick play's 26 tables among others'
    lobbies) clear of the gateways' reserve, past which a new table is refused `no_room`
    (tests/cluster/test_full.py)."""
    return Spec(
        table_slots=112,
        object_store_mb=128,
        gateways=2,
        namespace=namespace,
        test_hooks=True,
        pool=2,
        settings={
            # A fixed pool of 2, as before the pool followed demand: on these 2 cores every
            # actor the pool starts beyond it takes CPU from the tables the suite is playing
            # (issue 21), and a clean-clone run with the demand-following pool here had six
            # timing-sensitive tests fail (a keyboard swap refused while its ack was late, new
            # tables that no longer spread to a node added for the test). tests/cluster/
            # test_pool_demand.py runs the demand-following pool on a gateway of its own.
            "QUATRO_POOL_MAX": "2",
            # ... refilled at once, as before the pool was paced (issue 21): the production
            # defaults (no refill within 3 s of a creation, then one start every 2 s) spare
            # tables in play on a node under load, but here tests open tables back to back, and
            # past the pool's two each creation waited for an actor to start (the suite's
            # measured runs went from 26 to 43 minutes with them). The pacing has tests of its
            # own, on gateways of their own (tests/cluster/test_pool_demand.py); every other
            # stack keeps the defaults.
            "QUATRO_POOL_QUIET": "0",
            "QUATRO_POOL_START_GAP": "0",
            # Every test of the session opens tables on this one stack (the browser tests too):
            # tables whose test is done stop soon instead of holding their table slot for the
            # default 10–30 minutes, so the later tests still find free slots.
            "QUATRO_ABANDONED_IDLE": "120",
            "QUATRO_OVER_IDLE": "60",
            "QUATRO_LOBBY_IDLE": "300",
            # Quick play: public tables with seats still empty get bots after 8 s, not 60.
            "QUATRO_QUICK_FILL_S": "8",
            # Every player of the suite comes from 127.0.0.1: new sessions past a class's
            # burst (issue 47's quota, 60 then 1 a minute) are the suite's routine, and two
            # players at one table are two people (tests/cluster/test_quotas.py and
            # test_guests.py put both back on gateways of their own).
            "QUATRO_SESSION_RATE": "100000",
            "QUATRO_SESSION_BURST": "100000",
            "QUATRO_ADDRESS_TAGS": "0",
        },
    )


def own_database(stack: Stack, db: int) -> tuple[str, redis.Redis]:
    """Database `db` of the stack's redis-server, emptied, for one test alone: its URL (a
    gateway's REDIS_URL) and a client. A test whose gateway must have a pool list or sessions of
    its own uses one; the shared list also takes back the session's ended tables' actors
    (actors/reuse.py). Numbers in use: tests/README.md."""
    url = database_url(stack, db)
    store = redis.Redis.from_url(url, decode_responses=True)
    store.flushdb()
    return url, store


def database_url(stack: Stack, db: int) -> str:
    """The URL of database `db` of the stack's redis-server."""
    return stack.redis.url.rsplit("/", 1)[0] + f"/{db}"


def stop_own_pool(
    stack: Stack, store: redis.Redis, codes: list[str], actors: Iterable[str] = ()
) -> None:
    """Stop the actors of a test's own pool (in its own Redis database), of the tables it
    opened there, and `actors` (those of tables that may have ended meanwhile: one on its way
    back to the pool is on no list yet): each holds a table slot of the stack. Then that
    database is emptied."""
    names = [str(n) for n in store.lrange(keys.pool(), 0, -1)] + list(actors)
    for code in codes:
        raw = store.get(keys.table(code))
        if raw is not None:
            names.append(str(json.loads(raw)["actor"]))
    ray = stack.driver()
    for name in names:
        with contextlib.suppress(Exception):
            ray.kill(ray.get_actor(name, namespace=stack.namespace), no_restart=True)
    store.flushdb()


@contextlib.contextmanager
def gateway_of_its_own(
    stack: Stack, db: int, logs: Path, served: Iterable[str] = (), **env: str
) -> Iterator[Gateway]:
    """A gateway of the stack on database `db` of its own (`own_database`), ready. At the end it
    is stopped, then its pool's actors and those named in `served` (a module's set of the
    actors of tables it opened, read only then: one on its way back to the pool is on no list)
    are stopped and the database emptied (`stop_own_pool`)."""
    url, store = own_database(stack, db)
    gw = stack.gateway(logs, REDIS_URL=url, **env)
    try:
        gw.wait_ready()
        yield gw
    finally:
        gw.stop()
        stop_own_pool(stack, store, [], served)


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The session's real stack, shared by every test that asks for it (tests/README.md)."""
    if os.environ.get("QUATRO_CHECK"):
        pytest.fail("`make check` runs no Ray stack: this test belongs outside its folders")
    # Its table actors serve table after table, as everywhere (actors/reuse.py): a worker
    # process spared per table (tests/README.md, "What the R30 test pays for").
    st = Stack(suite_spec(f"test-{uuid.uuid4().hex[:8]}"), tmp_path_factory.mktemp("stack"))
    st.start()
    try:
        yield st
    finally:
        st.stop()
