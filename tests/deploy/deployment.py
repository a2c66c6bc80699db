"""The release as containers: one per pod, on one bridge network the test creates, each reachable
under the names of the Services that select it. Gateways are published on loopback only.

Each pod gets a fixed address on that network. The head needs one: a Kubernetes Service's
ClusterIP outlives its pod, and Ray nodes resolve `<head-svc>:6379` once and reconnect to that
address when the head comes back, so a head container that came back elsewhere would not be the
same test. The others need one for the NetworkPolicy rules (netpol.py), written once.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.deploy.docker import CACHE, Docker, DockerError
from tests.deploy.netpol import Enforcer
from tests.deploy.pods import PodPlan

ANSWER = "QUATRO-ANSWER"  # marks a short driver's own lines on its stdout (Deployment.ray)


@dataclass
class Deployment:
    docker: Docker
    plans: dict[str, PodPlan]
    # The NetworkPolicies in force (netpol.Enforcer), told when pods change address.
    enforcer: Enforcer | None = None
    prefix: str = field(default_factory=lambda: f"qd{uuid.uuid4().hex[:6]}")
    network: str = ""
    subnet: str = ""
    started: list[str] = field(default_factory=list)
    volumes: set[str] = field(default_factory=set)
    ips: dict[str, str] = field(default_factory=dict)
    slots: int = 0  # the table slots of all workers together
    scratch: list[Path] = field(default_factory=list)  # ConfigMap files, removed at the end

    # -- lifecycle --------------------------------------------------------------------------
    def create_network(self) -> None:
        self.network = f"{self.prefix}-net"
        # Let Docker pick a subnet no other network uses, then pin it: fixed addresses are only
        # allowed on networks created with an explicit subnet.
        self.docker.run("network", "create", "--driver=bridge", self.network)
        config = json.loads(
            self.docker.run("network", "inspect", "--format", "{{json .IPAM.Config}}", self.network)
        )
        self.subnet = config[0]["Subnet"]
        self.docker.run("network", "rm", self.network)
        self.docker.run(
            "network", "create", "--driver=bridge", f"--subnet={self.subnet}", self.network
        )
        # Docker hands out addresses from the bottom of the range: the top is never taken.
        top = ipaddress.ip_network(self.subnet).broadcast_address
        self.ips = {pod: str(top - 2 - i) for i, pod in enumerate(self.plans)}

    def container(self, pod: str) -> str:
        return f"{self.prefix}-{pod}"

    def start(self, pod: str) -> None:
        plan = self.plans[pod]
        name = self.container(pod)
        binds = {}
        for path, files in plan.files.items():
            where = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=CACHE))
            where.chmod(0o755)  # the pod's user reads it, as from a ConfigMap volume
            self.scratch.append(where)
            for filename, content in files.items():
                (where / filename).write_text(content)
            binds[path] = str(where)
        for volume in sorted(plan.claims - self.volumes):
            self.own_claim(plan, volume)
        args = plan.run_args(self.network, name, binds)
        args.insert(1, f"--ip={self.ips[pod]}")
        self.volumes |= set(plan.volumes.values())
        self.docker.run(*args)
        if name not in self.started:
            self.started.append(name)

    def own_claim(self, plan: PodPlan, volume: str) -> None:
        """What the kubelet does to a claim of a pod with an fsGroup: the volume's root belongs to
        that group, setgid, group-writable, so the pod's non-root user writes there (a new docker
        volume is root's 755). Done once, by a root container of the test's, before first use."""
        if not plan.groups:
            return
        self.docker.run(
            "run",
            "--rm",
            "--user=0",
            "--network=none",
            "--mount",
            f"type=volume,source={volume},target=/claim",
            "--entrypoint=/bin/sh",
            plan.image,
            "-c",
            f"chgrp {plan.groups[0]} /claim && chmod 2775 /claim",
        )
        self.volumes.add(volume)

    def teardown(self) -> None:
        for name in reversed(self.started):
            self.docker.run("rm", "--force", "--volumes", name, check=False, timeout=60)
        for volume in self.volumes:
            self.docker.run("volume", "rm", "--force", volume, check=False)
        if self.network:
            self.docker.run("network", "rm", self.network, check=False)
        for where in self.scratch:
            shutil.rmtree(where, ignore_errors=True)

    # -- what the test does to pods -----------------------------------------------------------
    def kill(self, pod: str) -> None:
        self.docker.run("kill", self.container(pod))

    def restart(self, pod: str) -> None:
        """What deleting the pod does: SIGTERM, the grace period, then a fresh pod with fresh
        emptyDirs (tmpfs) under the same name."""
        plan = self.plans[pod]
        self.docker.run(
            "restart",
            "--time",
            str(plan.stop_grace_s),
            self.container(pod),
            timeout=plan.stop_grace_s + 60,
        )

    def start_again(self, pod: str) -> None:
        self.docker.run("start", self.container(pod))

    def replace_losing_volumes(self, pod: str) -> None:
        """What a node lost with its disk does: the pod comes back under its name with empty
        claims."""
        name = self.container(pod)
        self.docker.run("rm", "--force", name, timeout=60)
        self.started.remove(name)
        for volume in self.plans[pod].claims:
            self.docker.run("volume", "rm", volume)
            self.volumes.discard(volume)
        self.start(pod)

    def readdress(self, pods: list[str]) -> None:
        """Stopped pods get addresses no pod had (as pods rescheduled together do on Kubernetes:
        same names, same volumes, new IPs), and the NetworkPolicies follow them."""
        top = ipaddress.ip_network(self.subnet).broadcast_address
        taken = set(self.ips.values())
        free = (str(top - k) for k in range(2, 250) if str(top - k) not in taken)
        for pod in pods:
            self.ips[pod] = next(free)
            name = self.container(pod)
            self.docker.run("network", "disconnect", self.network, name)
            aliases = [f"--alias={alias}" for alias in self.plans[pod].aliases]
            self.docker.run(
                "network", "connect", f"--ip={self.ips[pod]}", *aliases, self.network, name
            )
        if self.enforcer is not None:
            self.enforcer.reapply()

    def stop_like_kubernetes(self, pod: str) -> str:
        """The pod's preStop hook, then SIGTERM and the grace period (docker stop), as the kubelet
        does it. Returns what the hook printed (the kubelet keeps it only when it fails)."""
        plan = self.plans[pod]
        said = ""
        if plan.pre_stop:
            said = self.docker.run(
                "exec", self.container(pod), *plan.pre_stop, timeout=plan.stop_grace_s + 30
            )
        self.docker.run(
            "stop",
            "--time",
            str(plan.stop_grace_s),
            self.container(pod),
            timeout=plan.stop_grace_s + 60,
        )
        return said

    def exit_code(self, pod: str) -> int:
        return int(
            self.docker.run("inspect", "--format", "{{.State.ExitCode}}", self.container(pod))
        )

    def running(self, pod: str) -> bool:
        out = self.docker.run(
            "inspect", "--format", "{{.State.Running}}", self.container(pod), check=False
        )
        return out == "true"

    def ip(self, pod: str) -> str:
        return self.ips[pod]

    def probe(self, source: str, target: str, port: int) -> str:
        """From inside `source`: a TCP connection to `target` is open, refused (reached, nobody
        listens) or times out (dropped)."""
        script = (
            "import socket, sys\n"
            "s = socket.socket(); s.settimeout(3)\n"
            "try:\n"
            "    s.connect((sys.argv[1], int(sys.argv[2]))); print('open')\n"
            "except ConnectionRefusedError:\n"
            "    print('refused')\n"
            "except OSError:\n"
            "    print('timeout')\n"
        )
        return self.exec(source, "python", "-c", script, self.ips[target], str(port))

    def url(self, pod: str, port_name: str = "http") -> str:
        port = self.plans[pod].ports[port_name]
        out = self.docker.run("port", self.container(pod), f"{port}/tcp")
        host_port = next(line for line in out.splitlines() if line.startswith("127.0.0.1:"))
        return f"http://{host_port}"

    def logs(self, pod: str, tail: int = 60) -> str:
        return self.docker.logs(self.container(pod), tail)

    def exec(self, pod: str, *command: str, timeout: float = 60) -> str:
        return self.docker.run("exec", self.container(pod), *command, timeout=timeout)

    def pods(self, component: str) -> list[str]:
        return [name for name, plan in self.plans.items() if plan.component == component]

    # -- waiting ------------------------------------------------------------------------------
    def wait(self, what: str, check: Callable[[], bool], limit: float, pods: list[str]) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with contextlib.suppress(DockerError, httpx.HTTPError, OSError):
                if check():
                    return
            time.sleep(1)
        logs = "\n".join(f"--- {p}:\n{self.logs(p)}" for p in pods)
        raise AssertionError(f"not within {limit:.0f} s: {what}\n{logs}")

    def ready(self, pod: str) -> bool:
        r = httpx.get(self.url(pod) + "/readyz", timeout=5)
        return r.status_code == 200 and r.json().get("ready") is True

    def wait_exit(self, pod: str, limit: float) -> None:
        """A run-to-completion pod (a Job's) ends."""
        self.wait(f"{pod} ends", lambda: not self.running(pod), limit, [pod])

    def wait_probe(self, pod: str, limit: float) -> None:
        self.wait(f"{pod} passes its readiness probe", lambda: self.probe_ready(pod), limit, [pod])

    def wait_gateway_ready(self, pod: str, limit: float = 300) -> None:
        self.wait(f"{pod} /readyz", lambda: self.running(pod) and self.ready(pod), limit, [pod])

    def ray(self, script: str, timeout: float = 90) -> str:
        """A short Ray driver on the head (what an operator's `kubectl exec` would run): the
        head's container has the token and the address in its environment."""
        head = self.pods("ray-head")[0]
        # The driver's stdout also carries what Ray pushes to every driver (after a head restart:
        # "(raylet) The node ... has been marked dead", several lines, at any moment): the
        # script's own lines are marked, and the last of them is its answer.
        wrapped = (
            "import functools, ray, json, os\n"
            f"print = functools.partial(print, {ANSWER!r}, flush=True)\n"
            "ray.init(address='auto', namespace=os.environ['RAY_NAMESPACE'],"
            " logging_level='ERROR')\n" + script
        )
        out = self.exec(head, "python", "-c", wrapped, timeout=timeout)
        answers = [line for line in out.splitlines() if line.startswith(ANSWER + " ")]
        if not answers:  # as a failed exec: `wait` tries again
            raise DockerError(f"no answer from the driver on {head}: {out[-2000:]}")
        return answers[-1][len(ANSWER) + 1 :].strip()

    def table_slots(self) -> float:
        return float(self.ray("print(ray.cluster_resources().get('table_slot', 0))"))

    def all_slots(self) -> bool:
        """Every worker is a live member of the cluster."""
        return self.table_slots() >= self.slots

    def actor_state(self, actor: str) -> str:
        """Ray's record of a named actor (state, restarts, death cause), for a failure's report."""
        return self.ray(
            "import ray._private.state as s\n"
            f"h = ray.get_actor({actor!r})\n"
            "info = s.state.actor_table(h._actor_id.hex())\n"
            "print(json.dumps({k: str(info.get(k)) for k in"
            " ('State', 'NumRestarts', 'Address', 'DeathCause', 'EndTime')}))"
        )

    def table_node_ip(self, actor: str) -> str:
        """The address of the Ray node a table actor lives on."""
        return self.ray(
            "from actors.protocol import Probe\n"
            "from actors.ray_calls import answered, send\n"
            f"h = ray.get_actor({actor!r})\n"
            "node = answered(Probe(), ray.get(send(h, Probe()), timeout=30)).node\n"
            "print(next(n['NodeManagerAddress'] for n in ray.nodes() if n['NodeID'] == node))"
        )

    def probe_ready(self, pod: str) -> bool:
        """The pod's exec readiness probe passes (`redis-cli ping` must say PONG: it exits 0 on
        an error reply too)."""
        command = self.plans[pod].ready
        try:
            out = self.exec(pod, *command, timeout=30)
        except DockerError:  # the probe fails (exit 1), or the container is not running
            return False
        return command[-1] != "ping" or out == "PONG"

    def redis(self, *command: str) -> str:
        """redis-cli in a running node of the game store, as an operator's `kubectl exec` does
        (the pod's REDISCLI_AUTH carries the password); in a cluster, following redirections."""
        cluster = [p for p in self.pods("redis-cluster") if self.running(p)]
        if cluster:
            return self.exec(cluster[0], "redis-cli", "--no-auth-warning", "-c", *command)
        return self.exec(self.pods("redis")[0], "redis-cli", "--no-auth-warning", *command)

    def redis_get(self, key: str) -> str:
        return self.redis("GET", key)

    def cluster_nodes(self) -> list[list[str]]:
        """CLUSTER NODES, as seen from a running node: one list of fields per node."""
        return [line.split() for line in self.redis("CLUSTER", "NODES").splitlines() if line]

    @staticmethod
    def node_pod(fields: list[str]) -> str:
        """The pod of a CLUSTER NODES line: its announced hostname is <pod>.<service>…"""
        return fields[1].split(",")[1].split(".")[0]

    def primary_of(self, key: str) -> str:
        """The pod of the primary serving `key`'s slot now."""
        slot = int(self.redis("CLUSTER", "KEYSLOT", key))
        for fields in self.cluster_nodes():
            if "master" not in fields[2] or "fail" in fields[2]:
                continue
            for served in fields[8:]:
                if served.startswith("["):  # a slot being moved
                    continue
                first, _, last = served.partition("-")
                if int(first) <= slot <= int(last or first):
                    return self.node_pod(fields)
        raise DockerError(f"no primary serves slot {slot}")
