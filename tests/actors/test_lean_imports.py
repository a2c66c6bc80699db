"""A table actor's process imports only what it uses: each library it does not need is private
memory in every table's process (docs/performance.md, "Memory", has what each import stage
cost)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

# Libraries a table actor has no use for: it never validates settings or serves HTTP.
NOT_NEEDED = ("pydantic", "pydantic_settings", "fastapi", "starlette", "uvicorn", "httpx")


def test_the_table_actor_module_pulls_in_no_library_it_does_not_use() -> None:
    probe = (
        "import sys, actors.table_actor\n"
        f"print(sorted(m for m in {NOT_NEEDED!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout  # before: ['pydantic', 'pydantic_settings']


def test_the_table_core_runs_without_ray() -> None:
    """The table itself is plain Python: only actors.table_actor, its wrapper, knows Ray."""
    probe = (
        "import sys, actors.table_core\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def _probe(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.strip().splitlines()[-1]


AS_A_WORKER = (
    "import ray._private.worker as w\n"
    "w.global_worker.mode = w.WORKER_MODE  # what a Ray worker is when it loads the actor class\n"
)
REPORT = (
    "import sys\n"
    "from ray._common.pydantic_compat import PYDANTIC_INSTALLED\n"
    "import redis.observability.providers as otel\n"
    "print(PYDANTIC_INSTALLED, otel.OTEL_AVAILABLE,"
    " sorted(m for m in ('pydantic', 'pydantic_core', 'opentelemetry') if sys.modules.get(m)))"
)


def test_in_a_ray_worker_ray_and_redis_find_neither_pydantic_nor_opentelemetry() -> None:
    """Ray's serializer imports pydantic in every worker where it is installed (~5 MiB), redis
    OpenTelemetry's SDK (~1.4 MiB); a table actor's process keeps both out (actors/__init__)."""
    got = _probe(AS_A_WORKER + "import actors.table_actor\n" + REPORT)
    assert got == "False False []", got  # before: True True ['opentelemetry', 'pydantic', ...]


def test_the_libraries_kept_out_are_a_setting() -> None:
    env = "import os; os.environ['QUATRO_WORKER_KEEP_OUT'] = 'opentelemetry'\n"
    got = _probe(env + AS_A_WORKER + "import actors.table_actor\n" + REPORT)
    assert got == "True False ['pydantic', 'pydantic_core']", got


def test_outside_a_ray_worker_nothing_is_kept_out() -> None:
    """The gateway imports the actor module too, and it needs pydantic."""
    got = _probe("import ray, actors.table_actor, pydantic\n" + REPORT)
    assert got.startswith("True True ['opentelemetry', 'pydantic', 'pydantic_core']"), got
