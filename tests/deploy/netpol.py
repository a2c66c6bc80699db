"""The chart's NetworkPolicies, enforced on the test's bridge network with iptables.

Docker hands bridged traffic between containers to iptables (br_netfilter), through its
DOCKER-USER chain: a chain of the test's own, jumped to for the network's subnet, admits what the
rendered policies admit, pod to pod, and drops the rest for every pod a policy isolates. Traffic
from this machine to the published gateways does not cross that chain (it is the ingress
controller's path here). And nothing leaves the network: the test's pods talk to each other only.

Network aliases give Services their names, not their ports: where a Service maps its port onto
another (the gateway's 80 onto `http`), a DNAT rule per selected pod does what kube-proxy does.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from typing import Any

from tests.deploy.pods import PodPlan
from tests.helm.render import selects

Obj = dict[str, Any]


@dataclass(frozen=True)
class Admitted:
    source: str  # pod name
    target: str
    ports: tuple[int, int] | None  # TCP first-last; None: every port and protocol


def _ports(rule: Obj, target: PodPlan) -> list[tuple[int, int] | None]:
    if not rule.get("ports"):
        return [None]
    found: list[tuple[int, int] | None] = []
    for port in rule["ports"]:
        if port.get("protocol", "TCP") != "TCP":
            continue
        number = port["port"]
        if isinstance(number, str):  # a named port of the target's container
            if number not in target.ports:
                continue
            number = target.ports[number]
        found.append((int(number), int(port.get("endPort", number))))
    return found


def admitted(docs: list[Obj], plans: list[PodPlan]) -> tuple[set[str], list[Admitted]]:
    """The pods some policy isolates for ingress, and every (source, target, ports) it admits
    among the test's pods (all in one namespace)."""
    isolated: set[str] = set()
    allowed: list[Admitted] = []
    for policy in (d for d in docs if d["kind"] == "NetworkPolicy"):
        spec = policy["spec"]
        if "Ingress" not in spec.get("policyTypes", ["Ingress"]):
            continue
        targets = [p for p in plans if selects(spec["podSelector"], p.labels)]
        isolated |= {p.name for p in targets}
        for rule in spec.get("ingress", []):
            peers = rule.get("from")
            for target in targets:
                for ports in _ports(rule, target):
                    for source in plans:
                        if peers is None or any(
                            "podSelector" in peer
                            and selects(peer["podSelector"], source.labels)
                            # Same namespace, or a namespace selector that takes every one.
                            and peer.get("namespaceSelector", {}) == {}
                            for peer in peers
                        ):
                            allowed.append(Admitted(source.name, target.name, ports))
    return isolated, allowed


def service_ports(docs: list[Obj], plans: list[PodPlan]) -> list[tuple[str, int, int]]:
    """(pod, Service port, container port) wherever a Service maps a port onto another."""
    found = []
    for svc in (d for d in docs if d["kind"] == "Service"):
        selector = svc["spec"].get("selector", {})
        for plan in plans:
            if not selector or not selects({"matchLabels": selector}, plan.labels):
                continue
            for port in svc["spec"].get("ports", []):
                target = port.get("targetPort", port["port"])
                if isinstance(target, str):
                    target = plan.ports[target]
                if int(target) != int(port["port"]):
                    found.append((plan.name, int(port["port"]), int(target)))
    return found


def iptables(*args: str, check: bool = True) -> None:
    subprocess.run(["iptables", "-w", "10", *args], check=check, capture_output=True, timeout=30)


@dataclass
class Enforcer:
    subnet: str
    ips: dict[str, str]  # pod name -> its fixed address
    chain: str = ""
    nat_chain: str = ""
    applied: tuple[set[str], list[Admitted]] = (set(), [])

    def apply_services(self, mapped: list[tuple[str, int, int]]) -> None:
        self.nat_chain = "QN-" + hashlib.sha1(self.subnet.encode()).hexdigest()[:12]
        nat = ("-t", "nat")
        iptables(*nat, "-N", self.nat_chain)
        iptables(*nat, "-I", "PREROUTING", "1", "-s", self.subnet, "-j", self.nat_chain)
        for pod, port, target in mapped:
            ip = self.ips[pod]
            rule = ["-d", ip, "-p", "tcp", "--dport", str(port), "-j", "DNAT"]
            iptables(*nat, "-A", self.nat_chain, *rule, f"--to-destination={ip}:{target}")

    def reapply(self) -> None:
        """The same policies again, for pods that came back on new addresses (`ips` changed)."""
        self.remove_policies()
        self.apply(*self.applied)

    def apply(self, isolated: set[str], allowed: list[Admitted]) -> int:
        """Installs the rules; returns how many admit something."""
        self.applied = (isolated, allowed)
        self.chain = "QD-" + hashlib.sha1(self.subnet.encode()).hexdigest()[:12]
        iptables("-N", self.chain)
        iptables("-I", "DOCKER-USER", "1", "-s", self.subnet, "-j", self.chain)
        rules: list[list[str]] = [
            ["!", "-d", self.subnet, "-j", "DROP"],
            ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"],
        ]
        for pod, ip in sorted(self.ips.items()):
            if pod not in isolated:
                rules.append(["-d", ip, "-j", "RETURN"])
        for a in sorted(set(allowed), key=lambda a: (a.target, a.source, a.ports or (0, 0))):
            rule = ["-s", self.ips[a.source], "-d", self.ips[a.target]]
            if a.ports is not None:
                rule += ["-p", "tcp", "--dport", f"{a.ports[0]}:{a.ports[1]}"]
            rules.append([*rule, "-j", "RETURN"])
        rules.append(["-j", "DROP"])
        for rule in rules:
            iptables("-A", self.chain, *rule)
        return len(allowed)

    def remove(self) -> None:
        if self.nat_chain:
            nat = ("-t", "nat")
            iptables(*nat, "-D", "PREROUTING", "-s", self.subnet, "-j", self.nat_chain, check=False)
            iptables(*nat, "-F", self.nat_chain, check=False)
            iptables(*nat, "-X", self.nat_chain, check=False)
        self.remove_policies()

    def remove_policies(self) -> None:
        if not self.chain:
            return
        iptables("-D", "DOCKER-USER", "-s", self.subnet, "-j", self.chain, check=False)
        iptables("-F", self.chain, check=False)
        iptables("-X", self.chain, check=False)
        self.chain = ""
