"""A CPU cgroup of the test's own for its daemon's containers, of a low weight when asked.

Docker puts every container in a cgroup under one parent, and that parent competes with the
machine's other processes as a single entity of the default weight, whatever the nice value of
the processes in it. With `QUATRO_DEPLOY_CPU_SHARES` set, the daemon's containers go under a
parent of that weight (cgroup v1 `cpu.shares`; cgroup v2 `cpu.weight`, the same ratio), or, set
to `idle`, under a SCHED_IDLE parent (`cpu.idle`): they take what the rest leaves idle. For an
engineer who wants `make test-deploy` to yield to other work; CI does not use it (it was tried
to run this test beside the suite on 2 cores, and neither fitted: tests/README.md). Unset, or
where the cgroup cannot be made (no permission, no cpu controller), containers go where Docker
puts them by default.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

SHARES_ENV = "QUATRO_DEPLOY_CPU_SHARES"
ROOT = Path("/sys/fs/cgroup")
# The group's weight: cgroup v1 shares, or IDLE: the group is SCHED_IDLE (`cpu.idle`, Linux 5.15),
# so every other task preempts its pods at once on waking, not only once their share is spent.
IDLE = "idle"
Weight = int | str

log = logging.getLogger("quatro.deploy")


def shares_asked() -> Weight | None:
    raw = os.environ.get(SHARES_ENV, "").strip()
    if not raw:
        return None
    if raw == IDLE:
        return IDLE
    # cgroup v1's range for cpu.shares.
    return max(2, min(262144, int(raw)))


def v2_weight(shares: int) -> int:
    """cgroup v2's weight for a v1 share (the mapping runc and systemd use)."""
    return 1 + ((shares - 2) * 9999) // 262142


class CpuGroup:
    """`/<name>` in the cpu hierarchy; `parent` is what `dockerd --cgroup-parent` takes, None
    when no group was made."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.path: Path | None = None

    @property
    def parent(self) -> str | None:
        return f"/{self.name}" if self.path is not None else None

    def create(self, shares: Weight | None = None) -> str | None:
        shares = shares_asked() if shares is None else shares
        if shares is None:
            return None
        v1 = ROOT / "cpu"
        if (v1 / "cpu.shares").exists():
            path, weight_file = v1 / self.name, "cpu.shares"
        elif (ROOT / "cgroup.controllers").exists():
            path, weight_file = ROOT / self.name, "cpu.weight"
        else:
            log.warning("no cpu cgroup here: the containers keep Docker's default weight")
            return None
        try:
            path.mkdir(exist_ok=True)
            if shares == IDLE:
                (path / "cpu.idle").write_text("1")
            else:
                # A group left by an interrupted run may still be idle; a kernel before 5.15 has
                # no cpu.idle at all.
                if (path / "cpu.idle").exists():
                    (path / "cpu.idle").write_text("0")
                value = shares if weight_file == "cpu.shares" else v2_weight(int(shares))
                (path / weight_file).write_text(str(value))
        except OSError as exc:
            log.warning("cpu cgroup %s not made (%s): Docker's default weight", self.name, exc)
            return None
        self.path = path
        return self.parent

    def remove(self) -> None:
        """Once the daemon stopped (its containers gone, so the group is empty). Docker made the
        same parent in every other hierarchy (memory, pids, …) and leaves it behind: those go
        too."""
        if self.path is None:
            return
        for group in (self.path, *(d / self.name for d in ROOT.iterdir() if d.is_dir())):
            with contextlib.suppress(OSError):
                group.rmdir()
        self.path = None
