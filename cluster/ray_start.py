"""`ray start` for a node that only this machine can reach: run as
`python cluster/ray_start.py start <ray start args>`. It differs from Ray 2.60's CLI in two ways,
both by replacing one function of Ray's before the CLI runs:

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

Run by file path, so it needs nothing from this repository on sys.path; imports only Ray.
"""

from __future__ import annotations

import sys

import ray
import ray._private.services as services
import ray.scripts.scripts as cli


def _no_ray_client() -> ImportError:
    return ImportError("the Ray Client server is disabled by Quatro's launcher")


def _as_given(host: str) -> str:
    return host


if __name__ == "__main__":
    # Fail loudly, rather than expose the node, if a Ray upgrade renamed what we replace.
    for module, name in (
        (cli, "get_ray_client_dependency_error"),
        (services, "resolve_ip_for_localhost"),
    ):
        if not hasattr(module, name):
            sys.exit(f"cluster/ray_start.py: Ray {ray.__version__} has no {module.__name__}.{name}")
    cli.get_ray_client_dependency_error = _no_ray_client  # type: ignore[attr-defined]
    services.resolve_ip_for_localhost = _as_given
    sys.argv[0] = "ray"
    sys.exit(cli.main())  # type: ignore[no-untyped-call]
