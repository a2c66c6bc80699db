"""The Ray table actor: wraps the engine, owns the timers, snapshots to Redis, pushes events.

In a Ray worker (a table actor's process: the only actor this project runs), importing this
package first makes some libraries unimportable that other libraries load there only because
they are installed, and that a table never uses: Ray's serializer registers hooks for pydantic
whenever it can import it (ray._common.pydantic_compat: pydantic, pydantic.v1, pydantic_core,
~5 MiB in every table's process), and redis-py sets up OpenTelemetry metrics when it finds the
SDK (~1.4 MiB). The gateway needs pydantic, so they are installed; a worker imports this package
(to load the actor class) before it deserializes the actor's arguments, so before Ray reaches
for pydantic, and before redis is imported. Both treat the ImportError as "not installed".
Measured in docs/performance.md ("Memory"); QUATRO_WORKER_KEEP_OUT names the libraries
(comma-separated; empty: none), for such measurements.
"""

from __future__ import annotations

import os
import sys

KEEP_OUT_ENV = "QUATRO_WORKER_KEEP_OUT"
KEEP_OUT = ("pydantic", "opentelemetry")


def in_a_ray_worker() -> bool:
    """Whether this process is a Ray worker (not a driver, not a plain process), without
    importing Ray: a worker has it loaded and connected in worker mode."""
    worker = sys.modules.get("ray._private.worker")
    if worker is None:
        return False
    mode = getattr(getattr(worker, "global_worker", None), "mode", None)
    return mode is not None and mode == getattr(worker, "WORKER_MODE", object())


def keep_out(names: list[str]) -> list[str]:
    """Make each top-level library in `names` that is not loaded yet unimportable here (a None
    in sys.modules: `import` raises ModuleNotFoundError). Returns those it kept out."""
    kept = []
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]
            kept.append(name)
    return kept


def keep_out_names(value: str | None) -> list[str]:
    """The libraries to keep out, from QUATRO_WORKER_KEEP_OUT (unset: KEEP_OUT)."""
    if value is None:
        return list(KEEP_OUT)
    return [n.strip() for n in value.split(",") if n.strip()]


if in_a_ray_worker():
    keep_out(keep_out_names(os.environ.get(KEEP_OUT_ENV)))
