"""One TLS context for every HTTP client a script makes.

httpx builds a TLS context for each new client, loading the CA bundle: 21 ms of CPU on this
machine, on the event loop, even for an http:// URL (`python -m lab.tls_cost`, 5 December 2026:
20.97 ms with its own context, 0.08 ms with this one). A script whose players each make their own
client (`burst`, every REST call of `Player`) spent that per player or per call; under load the
loop fell behind its schedule by a second (tests/cluster/test_burst_smoke.py's
`script_late_ms_max`, 1,142 ms in a CI run of 2026-12-05).
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def context() -> ssl.SSLContext:
    """The process's TLS context (certificates verified, as httpx's default)."""
    return ssl.create_default_context()
