"""A table actor's process imports only what it uses: each library it does not need is private
memory in every table's process (loadtests/actor_memory.py measures the stages)."""

from __future__ import annotations

import subprocess
import sys

from loadtests.actor_memory import NOT_NEEDED
from tests.conftest import ROOT


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
