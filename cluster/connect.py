"""Joining the Ray cluster as a driver (never Ray Client: streaming actor calls need a driver,
and a driver is several times faster)."""

from __future__ import annotations

import logging
import os
import time

import ray

from cluster.procs import RAY_QUIET
from cluster.settings import Settings


def connect_ray(settings: Settings) -> None:
    """ray.init once per process. Call it before the server installs its signal handlers:
    Ray's own SIGTERM handling would otherwise replace the graceful shutdown."""
    if ray.is_initialized():
        return
    # The same auth mode as the head, or the driver fails after ~20 s (InvalidAuthToken).
    os.environ["RAY_AUTH_MODE"] = settings.ray_auth_mode
    for key, value in RAY_QUIET.items():  # this driver's own core worker, like the head's
        os.environ.setdefault(key, value)
    ray.init(
        address=settings.ray_address or "auto",
        namespace=settings.ray_namespace,
        logging_level=logging.WARNING,
        log_to_driver=False,
    )


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
