"""The pods go under the CPU cgroup asked for, if any (tests/deploy/cpu_group.py), and are
published where no other process's `bind(port 0)` lands (tests/deploy/pods.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.deploy.cpu_group import IDLE, ROOT, CpuGroup, Weight, shares_asked, v2_weight
from tests.deploy.deployment import Deployment


def cpu_cgroup(pid: int) -> str:
    """The process's group in the cpu hierarchy (cgroup v1), or its one group (v2)."""
    lines = [line.split(":", 2) for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()]
    for _, controllers, path in lines:
        if "cpu" in controllers.split(","):
            return path
    return lines[0][2]


def weight_of(group: Path) -> int:
    """cgroup v1's shares, or v2's weight."""
    if (group / "cpu.shares").exists():
        return int((group / "cpu.shares").read_text())
    return int((group / "cpu.weight").read_text())


def expected(shares: int, group: Path) -> int:
    return shares if (group / "cpu.shares").exists() else v2_weight(shares)


def has_weight(group: Path, asked: Weight) -> bool:
    idle = (group / "cpu.idle").read_text().strip() == "1"
    if asked == IDLE:
        return idle
    return not idle and weight_of(group) == expected(int(asked), group)


def test_a_group_is_made_with_its_weight_and_removed() -> None:
    group = CpuGroup(f"quatro-deploy-test-{os.getpid()}")
    parent = group.create(77)
    assert parent == f"/quatro-deploy-test-{os.getpid()}", "no cpu cgroup could be made here"
    try:
        assert group.path is not None
        made = group.path
        assert has_weight(made, 77)
        assert not has_weight(made, IDLE)
    finally:
        group.remove()
    assert not made.exists()
    assert group.parent is None


def test_an_idle_group_is_sched_idle_and_removed() -> None:
    group = CpuGroup(f"quatro-deploy-test-{os.getpid()}")
    assert group.create(IDLE) is not None, "no cpu cgroup could be made here"
    try:
        assert group.path is not None
        made = group.path
        assert has_weight(made, IDLE)
        assert not has_weight(made, 1024)
    finally:
        group.remove()
    assert not made.exists()


def test_no_group_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUATRO_DEPLOY_CPU_SHARES", raising=False)
    group = CpuGroup(f"quatro-deploy-test-{os.getpid()}")
    assert group.create() is None
    assert not (ROOT / "cpu" / group.name).exists()
    assert not (ROOT / group.name).exists()


def test_v2_weight_keeps_the_ratio_of_shares() -> None:
    assert v2_weight(2) == 1
    assert v2_weight(1024) == 39  # cgroup v1's default weight, as runc maps it
    assert v2_weight(262144) == 10000


def test_every_running_pod_is_in_the_group_asked_and_on_our_ports(
    deployment: Deployment,
) -> None:
    shares = shares_asked()
    ids = deployment.docker.run("ps", "--quiet").split()
    assert ids, "no pod running"
    for container in ids:
        pid = int(deployment.docker.run("inspect", "--format", "{{.State.Pid}}", container))
        group = cpu_cgroup(pid)
        if shares is None:
            assert not group.startswith("/quatro-deploy/"), container
        else:
            assert group.startswith("/quatro-deploy/"), (container, group)
        ports = deployment.docker.run("port", container).splitlines()
        for line in ports:
            host_port = int(line.rsplit(":", 1)[1])
            assert 30000 <= host_port <= 32767, line
    if shares is not None:
        v1 = ROOT / "cpu" / "quatro-deploy"
        made = v1 if v1.exists() else ROOT / "quatro-deploy"
        assert has_weight(made, shares)
