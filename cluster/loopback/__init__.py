"""The bind(2) interposer that keeps every listener of the embedded Ray on loopback.

Ray 2.60 offers no setting for the address its servers bind (see bind_loopback.c for why). We
compile the interposer with the system C compiler into a private directory of the run, named by
the hash of its source so a re-executed launcher finds it already built, and put it in the
LD_PRELOAD of every Ray process we start: their children (raylet, GCS, workers, agents) inherit it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("bind_loopback.c")


class NoCompilerError(RuntimeError):
    pass


def build(dest: Path) -> Path:
    """The interposer, built into `dest` (a private directory) unless already there."""
    source = SOURCE.read_bytes()
    lib = dest / f"bind_loopback-{hashlib.sha256(source).hexdigest()[:16]}.so"
    if lib.exists():
        return lib
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise NoCompilerError(
            "no C compiler (cc): the embedded Ray needs one to build its loopback-only bind "
            "interposer. `make deps` installs Debian's gcc; or `apt-get install gcc`."
        )
    partial = lib.with_suffix(f".{os.getpid()}.tmp")
    done = subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-o", str(partial), str(SOURCE), "-ldl"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"{cc} could not build {SOURCE.name}: {done.stderr.strip()}")
    partial.replace(lib)  # atomic: a concurrent reader never sees half a library
    return lib


def preload_env(lib: Path, env: dict[str, str]) -> None:
    """Put `lib` first in env's LD_PRELOAD, keeping whatever was there."""
    others = [p for p in env.get("LD_PRELOAD", "").split(":") if p and p != str(lib)]
    env["LD_PRELOAD"] = ":".join([str(lib), *others])
