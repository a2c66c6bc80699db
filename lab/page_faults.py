"""What a page fault costs on this machine: the first touch of fresh anonymous memory, against
touching the same pages again.

A table actor's start maps and touches ~100 MB (Ray's import, its core worker's buffers). Where
a first touch is cheap (a fraction of a microsecond on bare metal), that is a few tens of
milliseconds of kernel time per start; where every fault costs the hypervisor a fault of its own
(a VM whose memory is handed back to the host when freed, then faulted in again), it is far
more, and while a vCPU waits for the host nothing else runs on it — the load generator and the
gateway included. Run it before reading a ramp's figures on a new machine.

    python -m lab.page_faults                  # 512 MiB, 3 rounds
    python -m lab.page_faults --mib 256 --rounds 5
"""

from __future__ import annotations

import mmap
import time

from loadtests import cli
from loadtests.figures import emit

PAGE = mmap.PAGESIZE


def touch(m: mmap.mmap, size: int) -> float:
    """Seconds to write one byte in every page of `m`."""
    t0 = time.perf_counter()
    for off in range(0, size, PAGE):
        m[off] = 1
    return time.perf_counter() - t0


def measure(mib: int) -> dict[str, float]:
    """One fresh mapping of `mib` MiB: its first touch (a fault per page) and a second touch of
    the same pages (no fault: the loop's own cost), in microseconds per page."""
    size = mib << 20
    pages = size // PAGE
    m = mmap.mmap(-1, size)
    try:
        first = touch(m, size)
        again = touch(m, size)
    finally:
        m.close()
    return {
        "mib": float(mib),
        "first_touch_ms": round(first * 1000, 1),
        "again_ms": round(again * 1000, 1),
        "fault_us": round((first - again) / pages * 1e6, 3),
    }


def main(argv: list[str] | None = None) -> None:
    p = cli.command("lab.page_faults", __doc__)
    p.add_argument("--mib", type=int, default=512)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    for _ in range(a.rounds):
        emit(measure(a.mib))


if __name__ == "__main__":
    main()
