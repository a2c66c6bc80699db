"""The chart's sources, before rendering (test_rendered.py renders them): every value a template
reads exists in values.yaml, the chart is well-formed, the image carries every package the cluster
imports, and production defaults stay safe."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

CHART = Path(__file__).resolve().parents[2] / "helm" / "quatro"
VALUE_REF = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _values() -> dict[str, Any]:
    loaded = yaml.safe_load((CHART / "values.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_chart_metadata_is_helm_v2() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "quatro"
    assert re.fullmatch(r"\d+\.\d+\.\d+", chart["version"])


def test_every_value_a_template_reads_is_defined() -> None:
    values = _values()
    missing = []
    for template in sorted((CHART / "templates").iterdir()):
        for match in VALUE_REF.finditer(template.read_text()):
            node: Any = values
            for key in match.group(1).strip(".").split("."):
                if not isinstance(node, dict) or key not in node:
                    missing.append(f"{template.name}: .Values{match.group(1)}")
                    break
                node = node[key]
    assert missing == []


def test_test_hooks_are_off_by_default() -> None:
    assert _values()["testHooks"] is False


def test_ray_version_matches_the_pinned_one() -> None:
    lock = (CHART.parents[1] / "requirements.lock").read_text()
    pinned = re.search(r"^ray==(\S+)$", lock, re.M)
    assert pinned is not None
    assert _values()["ray"]["version"] == pinned.group(1)


def test_image_carries_every_runtime_package() -> None:
    dockerfile = (CHART.parent / "image" / "Dockerfile").read_text()
    for package in ("engine", "actors", "gateway", "cluster"):
        assert f"COPY {package}/ {package}/" in dockerfile
