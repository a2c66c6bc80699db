"""What a new httpx client costs on this machine, with httpx's own TLS context (the CA bundle
loaded again for each client) and with one context shared (`loadtests/tls.py`).

    python -m lab.tls_cost              # 20 clients each way
    python -m lab.tls_cost --clients 100

CPU time of this process (`time.process_time`), per client, in milliseconds: a script's event
loop pays it inline when each player or each REST call makes its own client.
"""

from __future__ import annotations

import argparse
import time

import httpx

from loadtests import tls
from loadtests.figures import emit
from loadtests.node import machine


def per_client_ms(clients: int, shared: bool) -> float:
    tls.context()  # made once before timing: what a script does before its first player
    start = time.process_time()
    for _ in range(clients):
        httpx.AsyncClient(verify=tls.context()) if shared else httpx.AsyncClient()
    return round((time.process_time() - start) / clients * 1000, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.tls_cost", description=__doc__)
    parser.add_argument("--clients", type=int, default=20)
    args = parser.parse_args(argv)
    emit(
        {
            "machine": machine(),
            "clients": args.clients,
            "ms_cpu_per_client": {
                "own_context": per_client_ms(args.clients, shared=False),
                "shared_context": per_client_ms(args.clients, shared=True),
            },
        }
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
