"""Joining the Ray cluster as a driver (never Ray Client: streaming actor calls need a driver,
and a driver is several times faster)."""

from __future__ import annotations

import logging
import os
import time

import ray

from cluster.procs import ONE_MACHINE, RAY_QUIET, is_loopback_address
from cluster.ray_auth import joining_auth_mode
from cluster.settings import Settings


def connect_ray(settings: Settings) -> None:
    """ray.init once per process. Call it before the server installs its signal handlers:
    Ray's own SIGTERM handling would otherwise replace the graceful shutdown."""
    if ray.is_initialized():
        return
    # The same auth mode as the head, or the driver fails after ~20 s (InvalidAuthToken). Ray
    # reads the token itself, from RAY_AUTH_TOKEN or the file RAY_AUTH_TOKEN_PATH names.
    if settings.ray_auth_token_path:
        os.environ["RAY_AUTH_TOKEN_PATH"] = settings.ray_auth_token_path
    os.environ["RAY_AUTH_MODE"] = joining_auth_mode(settings)
    stay_on_loopback(settings.ray_address)
    only_raylets_of(settings.ray_address)
    for key, value in RAY_QUIET.items():  # this driver's own core worker, like the head's
        os.environ.setdefault(key, value)
    reread_ray_env()
    ray.init(
        address=settings.ray_address or "auto",
        namespace=settings.ray_namespace,
        logging_level=logging.WARNING,
        log_to_driver=False,
    )


def stay_on_loopback(address: str | None) -> None:
    """Before ray.init(address): when `address` is on loopback, keep it there.

    Ray replaces 127.0.0.1 with this machine's public IP, both in the GCS address and as the
    driver's node IP, where a local head does not listen (cluster/ray_start.py). Its own switch
    for one-machine clusters keeps loopback; Ray reads the variable once, at import, so this
    process also gets the constant it was read into (children get the variable)."""
    if not is_loopback_address(address):
        return
    from ray._private import ray_constants

    os.environ[ONE_MACHINE] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False


def only_raylets_of(address: str | None) -> None:
    """Before ray.init(address) on loopback: the driver looks for its node among *every* raylet
    of the machine (found by their command lines) and asks the cluster's GCS about each, which
    times out on a raylet of another cluster: with two clusters on one machine (two cells,
    cluster/two_cells.py) the driver then fails to connect. Keep Ray's search to the raylets
    of `address`."""
    if not is_loopback_address(address):
        return
    from ray._private import services

    wanted = f"--gcs-address={address}"

    def node_ids() -> set[str]:
        import psutil

        found = set()
        for proc in psutil.process_iter(["cmdline"]):
            try:
                args = " ".join(proc.info["cmdline"] or []).split(" ")
            except (psutil.AccessDenied, psutil.NoSuchProcess):
                continue
            if not services._is_raylet_process(proc.info["cmdline"]) or wanted not in args:
                continue
            found |= {a.split("=", 1)[1] for a in args if a.startswith("--node_id=")}
        return found

    services.find_node_ids = node_ids


def reread_ray_env() -> None:
    """Make this process's Ray see RAY_* variables set after `import ray`: its config (the
    auth mode among it) is read once and cached, and so is the token. Ray's own switch to token
    auth (`_enable_token_auth`) does the same."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def wait_for_slots(slots: float, timeout: float) -> None:
    """Wait until the cluster offers `slots` table slots in all: nodes that just joined are
    known to every raylet, so the first tables already spread over them."""
    deadline = time.monotonic() + timeout
    while _offered() < slots:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the cluster offers fewer than {slots:g} table slots")
        time.sleep(0.2)


def _offered() -> float:
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    return resources.get("table_slot", 0.0)
