"""What a table actor's imports cost in private memory, stage by stage.

    python -m loadtests.actor_memory            # each stage in a fresh interpreter
    python -m loadtests.actor_memory --json

A Ray worker that holds a table is a Python process that imported Ray, then our actor module and
what it pulls in. Each stage below is measured in a fresh interpreter of its own (so no stage's
allocations blur another's): the process's USS (private memory: what the machine gets back when
it exits) after importing that stage's modules on top of the previous ones. The last column
says which heavy libraries the actor module pulled in that it does not need: a table actor
never validates settings (pydantic) or serves HTTP. The USS of actors running in Ray, with
their threads and buffers, is what `python -m loadtests.idle_floor` measures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

STAGES: list[tuple[str, list[str]]] = [
    ("python", []),
    ("+ ray", ["ray"]),
    ("+ redis", ["ray", "redis", "redis.asyncio"]),
    ("+ engine", ["ray", "redis", "redis.asyncio", "engine"]),
    ("+ actors.table_actor", ["ray", "redis", "redis.asyncio", "engine", "actors.table_actor"]),
]
# Libraries a table actor has no use for; their presence after the import is a regression.
NOT_NEEDED = ("pydantic", "pydantic_settings", "fastapi", "starlette", "uvicorn", "httpx")

PROBE = """
import importlib, json, sys
import psutil
for name in sys.argv[1:]:
    importlib.import_module(name)
info = psutil.Process().memory_full_info()
loaded = sorted({m.split('.')[0] for m in sys.modules})
print(json.dumps({"uss": info.uss, "rss": info.rss, "loaded": loaded}))
"""


def measure(modules: list[str]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    p = argparse.ArgumentParser(prog="python -m loadtests.actor_memory", description=__doc__)
    p.add_argument("--json", action="store_true", help="one JSON line instead of the table")
    a = p.parse_args()
    rows = []
    before = 0.0
    for label, modules in STAGES:
        got = measure(modules)
        uss = int(str(got["uss"])) / 2**20
        loaded = {str(m) for m in got["loaded"]}  # type: ignore[attr-defined]
        rows.append(
            {
                "stage": label,
                "uss_mib": round(uss, 1),
                "added_mib": round(uss - before, 1),
                "not_needed": [m for m in NOT_NEEDED if m in loaded],
            }
        )
        before = uss
    if a.json:
        print(json.dumps(rows))
        return 0
    print(f"{'stage':<24} {'USS MiB':>8} {'added':>7}  not needed but loaded")
    for r in rows:
        extra = ", ".join(r["not_needed"]) or "-"  # type: ignore[arg-type]
        print(f"{r['stage']:<24} {r['uss_mib']:>8} {r['added_mib']:>+7}  {extra}")
    return 1 if rows[-1]["not_needed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
