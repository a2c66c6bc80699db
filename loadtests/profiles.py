"""Profiles of running processes with py-spy (sampling from outside, `--nonblocking`: the target
is never paused), and a summary of where their Python time goes.

    python -m loadtests.profiles PID [PID…] --seconds 20 --out results/profile

py-spy sees Python threads only: time in Ray's C++ threads (its core worker's event loops and
timers) shows in the process's CPU (loadtests.node) but not here. Compare the two: the gap is
Ray's native overhead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from loadtests import cli

# First match wins, on the frame's text (`function (file:line)`), from the leaf up.
CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("json", ("json/", "_json", "orjson")),
    ("pickle/serialisation", ("pickle", "serializ", "cloudpickle", "msgpack")),
    ("redis client", ("redis/",)),
    ("ray (python side)", ("ray/",)),
    ("bots (policy)", ("engine/bots",)),
    ("engine (rules, views)", ("engine/",)),
    ("gateway", ("gateway/",)),
    ("table actor", ("actors/",)),
    ("websocket/http", ("websockets/", "uvicorn/", "starlette/", "fastapi/", "h11", "httptools")),
    ("pydantic", ("pydantic",)),
    ("asyncio loop", ("asyncio/", "uvloop", "selectors")),
    ("logging", ("logging/",)),
)


RATE = 100  # py-spy's samples per second


def py_spy() -> str:
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return exe


def record(
    pid: int, seconds: float, out: Path, rate: int = RATE, threads: bool = False
) -> subprocess.Popen[bytes]:
    """`threads`: each stack begins with its thread, so the event loop's own time reads apart
    from the worker threads' (`asyncio.to_thread`, Ray's Python-side threads)."""
    cmd = [py_spy(), "record", "--pid", str(pid), "--duration", str(int(seconds))]
    cmd += ["--rate", str(rate), "--format", "raw", "--output", str(out), "--nonblocking"]
    if threads:
        cmd.append("--threads")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def read_raw(path: Path) -> Counter[tuple[str, ...]]:
    stacks: Counter[tuple[str, ...]] = Counter()
    if not path.exists():
        return stacks
    for line in path.read_text(errors="replace").splitlines():
        frames, _, count = line.rpartition(" ")
        if not frames or not count.isdigit():
            continue
        stacks[tuple(frames.split(";"))] += int(count)
    return stacks


def category(frame: str) -> str | None:
    for name, marks in CATEGORIES:
        if any(m in frame for m in marks):
            return name
    return None


def thread_label(stack: tuple[str, ...]) -> str:
    """A stack's thread (recorded with `--threads`) by its name, threads of one name together
    (uvicorn's event loop is `MainThread`; AnyIO's or asyncio's workers share one name each)
    and an unnamed one by its id. Its frames say nothing reliable: an awaiting coroutine's
    stack starts at the coroutine, not at the loop that runs it."""
    head = stack[0]
    return head.split(": ", 1)[1] if ": " in head else head


def summarise(stacks: Counter[tuple[str, ...]], top: int = 25, possible: int | None = None) -> str:
    """`possible`: the samples one thread busy all the time would give (seconds × rate), so that
    each thread's share of the recording reads beside its share of the samples."""
    total = sum(stacks.values())
    if not total:
        return "no samples (the process was idle, or py-spy could not attach)\n"
    leaf_cat: Counter[str] = Counter()
    incl_cat: Counter[str] = Counter()
    leaf_fn: Counter[str] = Counter()
    incl_fn: Counter[str] = Counter()
    for stack, n in stacks.items():
        leaf = stack[-1]
        leaf_fn[leaf] += n
        cat = next((c for f in reversed(stack) if (c := category(f)) is not None), "other")
        leaf_cat[cat] += n
        for c in {category(f) for f in stack} - {None}:
            incl_cat[str(c)] += n
        for f in set(stack):
            incl_fn[f] += n
    lines = [f"{total} samples with a running Python thread", "", "self time by category:"]
    lines += [f"  {100 * n / total:5.1f}%  {c}" for c, n in leaf_cat.most_common()]
    lines += ["", "inclusive time by category (a sample counts for every category on its stack):"]
    lines += [f"  {100 * n / total:5.1f}%  {c}" for c, n in incl_cat.most_common()]
    by_thread: Counter[str] = Counter()
    for stack, n in stacks.items():
        if stack and stack[0].startswith("thread"):
            by_thread[thread_label(stack)] += n
    if by_thread:
        lines += ["", "time by thread:"]
        for t, n in by_thread.most_common(top):
            busy = f"  (busy {100 * n / possible:.0f} % of the recording)" if possible else ""
            lines.append(f"  {100 * n / total:5.1f}%  {t}{busy}")
    lines += ["", f"top {top} functions by self time:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in leaf_fn.most_common(top)]
    lines += ["", f"top {top} functions by inclusive time:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in incl_fn.most_common(top)]
    return "\n".join(lines) + "\n"


def profile_pids(out: Path, targets: dict[str, int], seconds: float) -> dict[str, Path]:
    """Record every target at once; write `<name>.raw` and `<name>.txt` (the summary)."""
    out.mkdir(parents=True, exist_ok=True)
    procs = {name: record(pid, seconds, out / f"{name}.raw") for name, pid in targets.items()}
    return collect(out, procs, targets, seconds)


def collect(
    out: Path, procs: dict[str, subprocess.Popen[bytes]], targets: dict[str, int], seconds: float
) -> dict[str, Path]:
    """Wait for recordings started with `record` and write their summaries."""
    written: dict[str, Path] = {}
    for name, proc in procs.items():
        try:
            _, err = proc.communicate(timeout=seconds + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        text = f"py-spy of {name} (pid {targets[name]}) for {seconds:g} s\n\n"
        text += summarise(read_raw(out / f"{name}.raw"), possible=int(seconds * RATE))
        if proc.returncode:
            text += "\npy-spy: " + err.decode(errors="replace")[-2000:]
        path = out / f"{name}.txt"
        path.write_text(text)
        written[name] = path
    return written


def main() -> None:
    p = cli.command("profiles", __doc__)
    p.add_argument("pids", type=int, nargs="+")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--out", type=Path, default=Path("results/profile"))
    a = p.parse_args()
    written = profile_pids(a.out, {f"pid{pid}": pid for pid in a.pids}, a.seconds)
    for path in written.values():
        print(path.read_text())


if __name__ == "__main__":
    main()
