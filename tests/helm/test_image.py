"""The image's recipe, checked without building it (no image builds on these machines): runtime
packages only, each pinned as in requirements.lock, nothing the code imports missing, not root,
a small build context, and a base pinned by digest."""

from __future__ import annotations

import ast
import importlib.metadata as md
import io
import re
import sys
import tarfile
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
IMAGE = REPO / "helm" / "image"
RUNTIME = IMAGE / "requirements.runtime.txt"
# Locust for the chart's load test, in a layer of its own (loadtest.enabled).
LOADTEST = IMAGE / "requirements.loadtest.txt"
# What the image carries and runs: the packages it copies, and the helm test's script.
SHIPPED = ("cluster", "actors", "gateway", "engine")
SMOKE = REPO / "helm" / "quatro" / "files" / "smoke.py"
# The only files of loadtests/ the image carries: the Locust players (the locustfile, the frames
# they read) and their /metrics route, and the players' own package, copied whole.
LOCUST_FILES = (
    "loadtests/__init__.py",
    "loadtests/locustfile.py",
    "loadtests/locust_metrics.py",
    "loadtests/frames.py",
    "loadtests/evening_curve.py",
)
LOCUST_PACKAGE = "loadtests/users"
# Development tools that once made the image 1.1 GB.
DEV_ONLY = {"pytest", "mypy", "ruff", "playwright", "locust", "matplotlib", "hypothesis", "numpy"}
# What Locust 2.47 itself requires, so the load-test layer carries it.
LOCUST_NEEDS = {"locust", "pytest"}


def _requirements(path: Path) -> dict[str, Requirement]:
    found: dict[str, Requirement] = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            req = Requirement(line)
            found[canonicalize_name(req.name)] = req
    return found


def _pin(req: Requirement) -> str:
    (spec,) = req.specifier
    assert spec.operator == "==", req
    return spec.version


def _imported_top_levels(files: list[Path] | None = None) -> set[str]:
    if files is None:
        files = [f for pkg in SHIPPED for f in (REPO / pkg).rglob("*.py")] + [SMOKE]
    names = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - set(SHIPPED) - {"__future__", "loadtests"}


def test_runtime_pins_equal_the_lock() -> None:
    lock = _requirements(REPO / "requirements.lock")
    for path in (RUNTIME, LOADTEST):
        listed = _requirements(path)
        assert listed, path
        for name, req in listed.items():
            assert name in lock, f"{name} ({path.name}) is not in requirements.lock"
            assert _pin(req) == _pin(lock[name]), name


def test_the_load_test_layer_adds_only_what_locust_needs() -> None:
    """Locust's closure, nothing the runtime already pins (one version per package), and no
    development tool but those Locust itself requires."""
    runtime, loadtest = _requirements(RUNTIME), _requirements(LOADTEST)
    assert set(runtime).isdisjoint(loadtest)
    assert DEV_ONLY & set(loadtest) == LOCUST_NEEDS
    both = {**runtime, **loadtest}
    assert _missing_dependencies(loadtest, both) == []
    # And nothing beyond that closure: every listed package is needed by Locust or the players.
    needed = {"locust", "websocket-client"}
    grown = True
    while grown:
        grown = False
        for name in list(needed):
            for raw in md.distribution(name).requires or []:
                dep = Requirement(raw)
                extras = both[name].extras or {""} if name in both else {""}
                if dep.marker is not None and not any(
                    dep.marker.evaluate({"extra": e}) for e in extras
                ):
                    continue
                key = canonicalize_name(dep.name)
                if key not in needed:
                    needed.add(key)
                    grown = True
    assert set(loadtest) <= needed, set(loadtest) - needed


def test_every_module_the_locust_files_import_is_installed_by_the_image() -> None:
    both = {**_requirements(RUNTIME), **_requirements(LOADTEST)}
    providers = md.packages_distributions()
    missing = {}
    files = [REPO / f for f in LOCUST_FILES] + sorted((REPO / LOCUST_PACKAGE).rglob("*.py"))
    for module in sorted(_imported_top_levels(files)):
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        assert dists, f"{module} is imported but no installed package provides it"
        if not dists & set(both):
            missing[module] = dists
    assert missing == {}
    text = (IMAGE / "Dockerfile").read_text()
    assert f"COPY {' '.join(LOCUST_FILES)} loadtests/" in text
    assert f"COPY {LOCUST_PACKAGE}/ {LOCUST_PACKAGE}/" in text


def test_the_locust_files_import_nothing_of_loadtests_the_image_leaves_out() -> None:
    """The players run in the image from what it copies: every `loadtests.*` module they
    import is one of the copied files or in the copied package."""
    copied = {f.removesuffix(".py").replace("/", ".") for f in LOCUST_FILES}
    package = LOCUST_PACKAGE.replace("/", ".")
    files = [REPO / f for f in LOCUST_FILES] + sorted((REPO / LOCUST_PACKAGE).rglob("*.py"))
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                top = node.module == "loadtests"
                modules = [f"loadtests.{a.name}" for a in node.names] if top else [node.module]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            for module in modules:
                if module.split(".")[0] != "loadtests":
                    continue
                inside = module in copied or module.startswith(package)
                assert inside, f"{path.relative_to(REPO)} imports {module}: not in the image"


def test_every_module_the_image_imports_is_installed_by_it() -> None:
    runtime = _requirements(RUNTIME)
    providers = md.packages_distributions()
    missing = {}
    for module in sorted(_imported_top_levels()):
        dists = {canonicalize_name(d) for d in providers.get(module, [])}
        assert dists, f"{module} is imported but no installed package provides it"
        if not dists & set(runtime):
            missing[module] = dists
    assert missing == {}


def _missing_dependencies(
    listed: dict[str, Requirement], available: dict[str, Requirement]
) -> list[str]:
    missing = []
    for name, req in listed.items():
        if req.marker is not None and not req.marker.evaluate():
            continue  # e.g. a backport for older Pythons than this one: not installed here
        extras = req.extras or {""}
        for raw in md.distribution(name).requires or []:
            dep = Requirement(raw)
            if dep.marker is not None and not any(
                dep.marker.evaluate({"extra": extra}) for extra in extras
            ):
                continue
            key = canonicalize_name(dep.name)
            if key not in available:
                missing.append(f"{name} needs {key}")
            elif not dep.extras <= available[key].extras:
                missing.append(f"{name} needs {key}{sorted(dep.extras)}")
    return missing


def test_every_dependency_of_a_runtime_package_is_pinned_too() -> None:
    """The Dockerfile installs with --no-deps: what is not listed is not there."""
    runtime = _requirements(RUNTIME)
    assert _missing_dependencies(runtime, runtime) == []


def test_no_development_tools_in_the_image() -> None:
    assert DEV_ONLY.isdisjoint(_requirements(RUNTIME))


def test_dockerfile_is_multi_stage_non_root_and_digest_pinned() -> None:
    text = (IMAGE / "Dockerfile").read_text()
    froms = re.findall(r"^FROM (\S+)", text, re.M)
    assert len(froms) >= 2
    assert all(f == "${PYTHON_BASE}" for f in froms)
    assert re.search(r"^ARG PYTHON_BASE$", text, re.M)
    # The build refuses a base given by tag alone.
    assert "*@sha256:*" in text
    assert "requirements.runtime.txt" in text
    instructions = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("requirements.lock" in line for line in instructions)  # the dev lock
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user, "the image runs as root"
    uid = user[-1].split(":")[0]
    assert uid.isdigit()
    assert uid != "0"
    values = yaml.safe_load((REPO / "helm" / "quatro" / "values.yaml").read_text())
    assert int(uid) == values["podSecurityContext"]["runAsUser"]
    for package in SHIPPED:
        assert f"COPY {package}/ {package}/" in text


def test_build_context_leaves_out_the_bulk() -> None:
    ignore = (IMAGE / "Dockerfile.dockerignore").read_text().splitlines()
    rules = [r.strip() for r in ignore if r.strip() and not r.startswith("#")]
    # Deny everything, then allow only what the Dockerfile copies.
    assert rules[0] == "*"
    allowed = {r[1:].rstrip("/") for r in rules if r.startswith("!")}
    # Every source of every COPY from the context (all but the last word, the destination).
    copies = re.findall(r"^COPY (?!--from)(.+)$", (IMAGE / "Dockerfile").read_text(), re.M)
    copied = {source.rstrip("/") for line in copies for source in line.split()[:-1]}
    assert copied <= allowed, copied - allowed
    assert not {".venv", ".git", "tests", "loadtests", "lab", "docs", ".cache"} & allowed


def test_the_deploy_tests_context_holds_every_file_the_dockerfile_copies() -> None:
    """The deployment test sends its own tar as the build context (the classic builder ignores
    Dockerfile.dockerignore): a source the Dockerfile copies but the tar lacks fails only there,
    after the long build stage, as it once did for loadtests/evening_curve.py."""
    from tests.deploy.docker import build_context

    with tarfile.open(fileobj=io.BytesIO(build_context())) as tar:
        names = set(tar.getnames())
    copies = re.findall(r"^COPY (?!--from)(.+)$", (IMAGE / "Dockerfile").read_text(), re.M)
    for source in (s.rstrip("/") for line in copies for s in line.split()[:-1]):
        assert source in names or any(n.startswith(source + "/") for n in names), source
    assert "helm/image/Dockerfile" in names
    assert not any(n.startswith((".venv/", "tests/", "lab/", ".git/")) for n in names)


def test_ray_is_on_the_path_of_kuberays_login_shell() -> None:
    """KubeRay starts Ray pods with `/bin/bash -lc`, whose /etc/profile resets PATH: the venv
    must come back through /etc/profile.d, or `ray` is not found (exit 127)."""
    text = (IMAGE / "Dockerfile").read_text()
    runtime = text.split("# -- runtime")[1]
    assert re.search(r"/etc/profile\.d/\S+\.sh", runtime)
    assert re.search(r"export PATH=/opt/venv/bin:\$PATH.*/etc/profile\.d/", runtime)
