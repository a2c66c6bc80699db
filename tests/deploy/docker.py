"""A Docker daemon of the test's own, and the images the deployment test runs.

No registry is reachable from these machines, so nothing is pulled: the base is a Debian bookworm
made with debootstrap from the host's own Debian mirror and `docker import`ed, and the project
image is built from helm/image/Dockerfile on it, its `pip install` reaching the package index the
way the host does (the host's network, name resolution and trust store). Everything lives under
.cache/deploy (the daemon's data root, so layers, and with them the installed wheels, are reused by
the next run; the debootstrap tarball), and the daemon is stopped by its own PID.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from tests.deploy.cpu_group import CpuGroup

REPO = Path(__file__).resolve().parents[2]
# Resolved: runc refuses a container's root under a symbolic link, and .cache may be one (a git
# worktree sharing another checkout's cache).
CACHE = Path(os.environ.get("QUATRO_DEPLOY_CACHE", REPO / ".cache" / "deploy")).resolve()
DOCKER_BIN = shutil.which("docker") or "docker"

# What the base carries. python3.11 with venv and `python` stands in for python:3.11-slim-bookworm;
# redis-server makes the same base serve as the Redis image (the chart's redis:<tag> is not
# reachable): Debian's 7.0, which reads its config from stdin as the chart's command needs.
BASE_PACKAGES = ("python3", "python3-venv", "python-is-python3", "ca-certificates", "redis-server")
BASE_TAG = "quatro-test-base:bookworm"


class DockerError(RuntimeError):
    pass


class Docker:
    """The `docker` client bound to one daemon's socket."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["DOCKER_HOST"] = f"unix://{self.socket}"
        # The daemon has no buildx plugin, and BuildKit would fetch the Dockerfile frontend named
        # by `# syntax=` from a registry: the classic builder ignores that line.
        env["DOCKER_BUILDKIT"] = "0"
        env.pop("DOCKER_CONTEXT", None)
        return env

    def run(
        self,
        *args: str,
        check: bool = True,
        stdin: bytes | None = None,
        timeout: float = 120,
    ) -> str:
        proc = subprocess.run(
            [DOCKER_BIN, *args],
            input=stdin,
            capture_output=True,
            env=self.env(),
            timeout=timeout,
            check=False,
        )
        out = proc.stdout.decode(errors="replace")
        if check and proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            raise DockerError(
                f"docker {' '.join(args[:3])}… exit {proc.returncode}: {out[-3000:]}\n{err[-3000:]}"
            )
        return out.strip()

    def logs(self, container: str, tail: int) -> str:
        """A container's output as `kubectl logs` shows a pod's: stdout and stderr in the order
        written. `run` keeps stdout only, which had dropped every line of the gateways' Python
        logging (stderr) from the logs CI prints when a test fails."""
        proc = subprocess.run(
            [DOCKER_BIN, "logs", "--tail", str(tail), container],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.env(),
            timeout=120,
            check=False,
        )
        return proc.stdout.decode(errors="replace").strip()

    def ok(self, *args: str, timeout: float = 60) -> bool:
        try:
            self.run(*args, timeout=timeout)
        except (DockerError, subprocess.TimeoutExpired):
            return False
        return True


class Dockerd:
    """dockerd with its own data root, exec root, socket and pid file; no default bridge (the test
    makes its own network). Started and stopped by the test, by PID."""

    def __init__(self, root: Path = CACHE) -> None:
        self.root = root
        self.data_root = root / "docker"
        self.socket = root / "docker.sock"
        self.pidfile = root / "dockerd.pid"
        self.log = root / "dockerd.log"
        # containerd's sockets live in the exec root: unix socket paths must stay short.
        self.exec_root = Path(tempfile.mkdtemp(prefix="qd-", dir="/tmp"))
        self.proc: subprocess.Popen[bytes] | None = None
        self.client = Docker(self.socket)
        self.cpu = CpuGroup("quatro-deploy")

    def start(self, timeout: float = 90) -> Docker:
        dockerd = shutil.which("dockerd")
        if dockerd is None:
            raise DockerError("no dockerd: apt-get install docker.io (make test-deploy does)")
        self.root.mkdir(parents=True, exist_ok=True)
        if self.pidfile.exists():
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(self.pidfile.read_text().strip() or "0"), 0)
                raise DockerError(f"a dockerd of an earlier run is still up: see {self.pidfile}")
            self.pidfile.unlink()
        self.socket.unlink(missing_ok=True)
        parent = self.cpu.create()
        log = open(self.log, "ab")  # noqa: SIM115 - the daemon owns it
        self.proc = subprocess.Popen(
            [
                dockerd,
                *([f"--cgroup-parent={parent}"] if parent else []),
                f"--data-root={self.data_root}",
                f"--exec-root={self.exec_root}",
                f"--host=unix://{self.socket}",
                f"--pidfile={self.pidfile}",
                "--bridge=none",
                # Published ports on loopback and the user-defined bridge's isolation need it.
                "--iptables=true",
                "--ip-forward=false",
                "--userland-proxy=true",
                "--log-level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DockerError(f"dockerd exited {self.proc.returncode}: {self.tail()}")
            if self.socket.exists() and self.client.ok("version", timeout=10):
                return self.client
            time.sleep(0.5)
        raise DockerError(f"dockerd not up after {timeout} s: {self.tail()}")

    def tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-3000:]
        return ""

    def stop(self, timeout: float = 60) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.socket.unlink(missing_ok=True)
        self.pidfile.unlink(missing_ok=True)
        # dockerd leaves its network namespace's bind mount behind in the exec root.
        with contextlib.suppress(OSError):
            for line in Path("/proc/mounts").read_text().splitlines():
                point = line.split()[1]
                if point.startswith(f"{self.exec_root}/"):
                    subprocess.run(["umount", "-l", point], check=False, timeout=30)
        shutil.rmtree(self.exec_root, ignore_errors=True)
        self.cpu.remove()


# -- the base image --------------------------------------------------------------------------


def debian_mirror() -> str:
    """The host's own Debian mirror for bookworm, read from its APT sources (never a name of our
    own choosing: the machine reaches the mirrors its APT is set up for)."""
    if os.environ.get("QUATRO_DEBIAN_MIRROR"):
        return os.environ["QUATRO_DEBIAN_MIRROR"]
    deb822 = Path("/etc/apt/sources.list.d/debian.sources")
    if deb822.exists():
        for stanza in deb822.read_text().split("\n\n"):
            fields = dict(
                line.split(":", 1) for line in stanza.splitlines() if re.match(r"^\w[\w-]*:", line)
            )
            suites = fields.get("Suites", "").split()
            if "bookworm" in suites and "URIs" in fields:
                return fields["URIs"].split()[0]
    listing = Path("/etc/apt/sources.list")
    if listing.exists():
        for line in listing.read_text().splitlines():
            m = re.match(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+bookworm\s", line)
            if m:
                return m.group(1)
    raise DockerError(
        "no Debian bookworm mirror in the host's APT sources: set QUATRO_DEBIAN_MIRROR"
    )


def base_tarball(timeout: float = 1500) -> Path:
    """debootstrap's bookworm as a tarball, made once and kept in the cache."""
    tarball = CACHE / "base-bookworm.tar"
    stamp = CACHE / "base-bookworm.packages"
    wanted = " ".join(BASE_PACKAGES)
    if tarball.exists() and stamp.exists() and stamp.read_text() == wanted:
        return tarball
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise DockerError("no debootstrap: apt-get install debootstrap (make test-deploy does)")
    CACHE.mkdir(parents=True, exist_ok=True)
    rootfs = Path(tempfile.mkdtemp(prefix="rootfs-", dir=CACHE))
    try:
        subprocess.run(
            [
                "nice",
                "-n",
                "10",
                debootstrap,
                "--variant=minbase",
                f"--include={','.join(BASE_PACKAGES)}",
                "bookworm",
                str(rootfs),
                debian_mirror(),
            ],
            check=True,
            capture_output=True,
            timeout=timeout,
        )
        # pip in the build goes out the way the host's does: that includes trusting what the host
        # trusts (its bundle replaces Debian's, and PIP_CERT names it, see base_image()).
        shutil.copyfile(
            "/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/ca-certificates.crt"
        )
        # An image needs no APT lists nor caches; smaller tarball, faster import.
        for junk in ("var/lib/apt/lists", "var/cache/apt/archives"):
            for child in (rootfs / junk).glob("*"):
                if child.is_file():
                    child.unlink()
        part = tarball.with_suffix(".part")
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(part), "."],
            check=True,
            timeout=600,
        )
        part.rename(tarball)
        stamp.write_text(wanted)
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    return tarball


def base_image(docker: Docker) -> str:
    """The imported base, as name@sha256:digest: the Dockerfile accepts only a base pinned by
    digest, and the classic builder resolves a digest only through a repository digest, which an
    imported image lacks. So the base is pushed once to a registry of the test's own, on
    loopback, and that push's digest names it from then on (kept by the daemon's data root)."""
    found = docker.run(
        "image", "inspect", "--format", "{{json .RepoDigests}}", BASE_TAG, check=False
    )
    if not found.startswith("["):
        tarball = base_tarball()
        with open(tarball, "rb") as handle:
            docker.run(
                "import",
                "--change",
                "ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt",
                "--change",
                "ENV LANG=C.UTF-8",
                "-",
                BASE_TAG,
                stdin=handle.read(),
                timeout=600,
            )
        found = "[]"
    digests: list[str] = json.loads(found) or []
    if not digests:
        digests = [push_to_own_registry(docker, BASE_TAG)]
    return digests[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def push_to_own_registry(docker: Docker, image: str, timeout: float = 120) -> str:
    """Debian's docker-registry on a loopback port (Docker trusts 127.0.0.0/8 without TLS), its
    storage a temporary directory; stopped by its PID once the image is pushed."""
    binary = shutil.which("docker-registry")
    if binary is None:
        raise DockerError(
            "no docker-registry: apt-get install docker-registry (make test-deploy does)"
        )
    port = free_port()
    root = Path(tempfile.mkdtemp(prefix="registry-", dir=CACHE))
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\n"
        f"storage: {{filesystem: {{rootdirectory: {root / 'data'}}}}}\n"
        f"http: {{addr: '127.0.0.1:{port}'}}\n"
    )
    proc = subprocess.Popen(
        [binary, "serve", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise DockerError("docker-registry did not start")
            time.sleep(0.2)
        remote = f"127.0.0.1:{port}/{image}"
        docker.run("tag", image, remote)
        docker.run("push", remote, timeout=timeout)
        # The tag stays: removing a repository's last tag drops its digest too.
        found = docker.run("image", "inspect", "--format", "{{json .RepoDigests}}", image)
        digests: list[str] = json.loads(found) or []
        if not digests:
            raise DockerError(f"pushed {image} but it has no repository digest")
        return digests[0]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)


# -- the project image -------------------------------------------------------------------------

# What the build may see is what helm/image/Dockerfile.dockerignore lets through (its `!` lines),
# read from that one file: the classic builder does not read Dockerfile.dockerignore, so the
# context is made here, never the whole repository, and a second list of it here would drift
# (it did: the evening's curve was copied by the Dockerfile and allowed there, but not sent).
DOCKERIGNORE = REPO / "helm" / "image" / "Dockerfile.dockerignore"


def context_paths() -> tuple[str, ...]:
    allowed = [
        line.strip()[1:].rstrip("/")
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip().startswith("!")
    ]
    return ("helm/image/Dockerfile", *allowed)


def build_context() -> bytes:
    buf = io.BytesIO()
    # ustar: the docker client sniffs stdin for a tar header, and a leading PAX header fools it.
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for top in context_paths():
            where = REPO / top
            for path in sorted(where.rglob("*")) if where.is_dir() else [where]:
                rel = path.relative_to(REPO)
                if "__pycache__" in rel.parts or path.suffix == ".pyc" or not path.is_file():
                    continue
                tar.add(path, arcname=str(rel), recursive=False)
    return buf.getvalue()


def host_entries() -> list[str]:
    """--add-host for each name the host resolves through /etc/hosts, so the build resolves as
    the host does."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for line in Path("/etc/hosts").read_text().splitlines():
            fields = line.split("#")[0].split()
            if len(fields) >= 2 and ":" not in fields[0]:
                found += [f"--add-host={name}:{fields[0]}" for name in fields[1:]]
    return found


def build_project_image(docker: Docker, tag: str, timeout: float = 1500) -> str:
    base = base_image(docker)
    context = build_context()
    common = [
        "build",
        "--force-rm",
        "--network=host",
        *host_entries(),
        "--build-arg",
        f"PYTHON_BASE={base}",
        "-f",
        "helm/image/Dockerfile",
    ]
    # The build stage (the pip install, the slow part) tagged too: untagged, its layers would be
    # dangling, and the prune below would throw the next run's cache away with them.
    docker.run(*common, "--target=build", "-t", f"{tag}-build", "-", stdin=context, timeout=timeout)
    docker.run(*common, "-t", tag, "-", stdin=context, timeout=timeout)
    # What earlier builds left behind (layers of changed sources): not the cache of this one.
    docker.run("image", "prune", "--force", check=False)
    return tag
