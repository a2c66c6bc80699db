"""`ray start` for a node that only this machine can reach: run as
`python cluster/ray_start.py start <ray start args>`. It differs from Ray 2.60's CLI in four ways,
each by replacing one function of Ray's before the CLI runs:

- No Ray Client server. `ray start --head` always starts one (port 10001 unless told another)
  when grpc is installed, and no flag turns it off: `--ray-client-server-port` only accepts
  1024-65535. We never use Ray Client (the gateway is a driver), so it would be one more
  listener for nothing. The CLI starts it only if it believes the client's dependencies are
  installed: it is told they are not.
- 127.0.0.1 stays 127.0.0.1. Ray replaces a loopback `--node-ip-address` or `--address` with
  the machine's public IP, so that addresses it publishes work from other hosts; its agents
  then listen on that IP, and a node would look for the GCS there although our head listens on
  loopback only (cluster/loopback). Drivers get the same from Ray's own switch for one-machine
  clusters (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0), which `ray start --address` refuses.
- The raylet is told the dashboard agent's HTTP port. `ray start` passes it the agent's other
  ports but not that one, although we give all three (cluster/procs.py), so the raylet waited
  for the agent to write it to a file (NodeManager::WaitForDashboardAgentPorts) before it
  registered with the GCS: as long as the agent's ~100 imports take, 6 s at load 10, 17 s and
  more at load 30, and past 15 s the raylet aborts and the node is lost ("The current node
  timed out during startup"). Told, it registers as soon as its own servers are up; nothing of
  ours talks to that agent.
- The wait for the node to register is patient: `ray start` asks the GCS in a loop without a
  pause and gives up after 30 s (hard-coded); here each ask is followed by a short pause, for
  up to QUATRO_RAY_REGISTER_WAIT seconds (180) in all.

Its output is line-buffered: "Ray runtime started.", which `ray start` prints once its node is
registered, is what cluster/procs.py waits for before a driver may join (a driver that joins
earlier fails after 60 s with "No node info found").

Run by file path, so it needs nothing from this repository on sys.path; imports only Ray.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import ray
import ray._private.services as services
import ray.scripts.scripts as cli
from ray._private import ray_constants


def _no_ray_client() -> ImportError:
    return ImportError("the Ray Client server is disabled by Quatro's launcher")


def _as_given(host: str) -> str:
    return host


def _raylet_told_the_agents_port(start: Callable[..., Any]) -> Callable[..., Any]:
    """Ray's `start_ray_process`, passing the raylet the dashboard agent's HTTP port too."""

    def start_ray_process(command: list[str], process_type: str, *args: Any, **kw: Any) -> Any:
        if process_type == ray_constants.PROCESS_TYPE_RAYLET:
            agent = next((a for a in command if a.startswith("--dashboard_agent_command=")), "")
            port = re.search(r"--listen-port=(\d+)", agent)
            if port is not None and int(port.group(1)) > 0:
                command = [*command, f"--dashboard_agent_listen_port={port.group(1)}"]
        return start(command, process_type, *args, **kw)

    return start_ray_process


def _patient(get_node: Callable[[str, str], Any], wait_s: float) -> Callable[[str, str], Any]:
    """`get_node`, asked again after a pause while the GCS does not know the node yet, for up to
    `wait_s` seconds in all."""

    def get_node_patiently(gcs_address: str, node_id: str) -> Any:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return get_node(gcs_address, node_id)
            except RuntimeError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.25)

    return get_node_patiently


if __name__ == "__main__":
    # Fail loudly, rather than expose the node, if a Ray upgrade renamed what we replace.
    for module, name in (
        (cli, "get_ray_client_dependency_error"),
        (services, "resolve_ip_for_localhost"),
        (services, "get_node"),
        (services, "start_ray_process"),
        (ray_constants, "PROCESS_TYPE_RAYLET"),
    ):
        if not hasattr(module, name):
            sys.exit(f"cluster/ray_start.py: Ray {ray.__version__} has no {module.__name__}.{name}")
    cli.get_ray_client_dependency_error = _no_ray_client  # type: ignore[attr-defined]
    services.resolve_ip_for_localhost = _as_given
    services.start_ray_process = _raylet_told_the_agents_port(services.start_ray_process)
    services.get_node = _patient(
        services.get_node, float(os.environ.get("QUATRO_RAY_REGISTER_WAIT", "180"))
    )
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.argv[0] = "ray"
    sys.exit(cli.main())  # type: ignore[no-untyped-call]
