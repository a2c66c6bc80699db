"""The rendered RayCluster against the CRD of the KubeRay operator the chart pins (crds/README.md
says where it comes from), as strictly as `kubectl apply --validate=strict`: a wrong type or a
field the operator does not know fails, where the API server would silently drop it."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.helm.render import CASES, CHART, render

CRD = Path(__file__).parent / "crds" / "ray.io_rayclusters.yaml"
CRD_OPERATOR_VERSION = "1.6.2"


def _strict(schema: Any) -> Any:
    """Unknown fields become errors wherever the CRD does not keep them on purpose
    (x-kubernetes-preserve-unknown-fields): that is what strict validation means for a CRD."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    crd = yaml.safe_load(CRD.read_text())
    (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = _strict(v1["schema"]["openAPIV3Schema"])
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


def _errors(obj: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(obj)
    ]


def test_the_crd_is_the_pinned_operator_s() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["ray"]["operatorVersion"] == CRD_OPERATOR_VERSION
    crd = yaml.safe_load(CRD.read_text())
    assert crd["metadata"]["name"] == "rayclusters.ray.io"


@pytest.mark.parametrize("case", sorted(CASES))
def test_rendered_raycluster_validates_against_the_crd(case: str) -> None:
    ray = render(case).one("RayCluster")
    assert ray["apiVersion"] == "ray.io/v1"
    assert _errors(ray) == []


def test_the_validation_catches_what_the_api_server_would_drop_or_refuse() -> None:
    ray = render("default").one("RayCluster")
    typo = copy.deepcopy(ray)
    typo["spec"]["workerGroupSpecs"][0]["rayStartParam"] = {"num-cpus": "0"}
    assert any("rayStartParam" in e for e in _errors(typo))
    wrong_type = copy.deepcopy(ray)
    wrong_type["spec"]["workerGroupSpecs"][0]["replicas"] = "2"
    assert any("replicas" in e for e in _errors(wrong_type))
    bad_enum = copy.deepcopy(ray)
    bad_enum["spec"]["authOptions"]["mode"] = "password"
    assert any("authOptions/mode" in e for e in _errors(bad_enum))
