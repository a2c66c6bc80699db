"""The OpenAPI tells the whole truth: Schemathesis, a property-based fuzzer, reads the live
`/openapi.json` of a real gateway and sends what it draws from it (every phase but the stateful
one: the schema's examples, its boundaries and invalid values, then random valid and invalid
requests) with a real session, at real tables. Every answer must be one the operation documents
(status, media type, headers and body schema, and for a refusal, one of the error codes the
operation lists), no answer is a server error (a 503 is allowed where documented), and no
schema-valid request is refused as malformed (`422 bad_message`): the schema holds every
constraint the server enforces. Answers refused for the state of things (a table that does not
exist, a seat already taken, a quota spent) are documented statuses, not violations.

State for real paths: the fuzzer's session hosts a table in its lobby, another player's lobby
and a match under way are there too, and the fuzzer draws their codes and table ids half the
time (Schemathesis' parameter dictionaries); the rest of the time it draws codes of its own
(404). Deterministic: a fixed seed, Hypothesis derandomized, no example database, one worker."""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import jsonschema
import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis.engine import events, from_schema

from gateway.names import LABEL_FORMAT, NAME_FORMAT, check_label, check_name
from tests.conftest import Stack

SEED = 34
MAX_EXAMPLES = 12  # per operation and phase: ~700 requests, under a minute on a quiet machine


def _valid(name: str, rule: Any = check_name) -> bool:
    try:
        rule(name)
    except ValueError:
        return False
    return True


def _valid_label(label: str) -> bool:
    return _valid(label, check_label)


# `format: quatro-name` (gateway/models.py): the pattern and lengths say what a regular
# expression can; the rest of the rule (visible length, marks, a bot's name) is the format's.
NAMES = st.one_of(
    st.sampled_from(["Ana", "Ana 👩‍💻", "🇭🇹 Jean", "مريم", "Zoë", "  Ti  Jak  "]),
    st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]), min_size=1, max_size=24),
).filter(_valid)
schemathesis.openapi.format(NAME_FORMAT, NAMES)
# `format: quatro-label` (a passkey's label, gateway/profile_models.py): a name's characters,
# 1-40 of them, any reading.
LABELS = st.one_of(
    st.sampled_from(["Chrome · Android (Pixel 7)", "Bot 3", "Laptop 👩‍💻", "هاتفي"]),
    st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]), min_size=1, max_size=40),
).filter(_valid_label)
schemathesis.openapi.format(LABEL_FORMAT, LABELS)


@schemathesis.check
def schema_valid_is_not_malformed(
    ctx: schemathesis.CheckContext,
    response: schemathesis.Response,
    case: schemathesis.Case[Any],
) -> bool | None:
    """A request drawn valid from the schema is never `422 bad_message`: a refusal for the
    state of a table (`bad_seat` past its last seat, `bad_scenario`) is documented, a
    malformed request is not."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    if _probe(response, case) or _breaks_a_format(case):
        return None
    code = _error_code(response)
    if code == "bad_message":
        raise AssertionError(f"a schema-valid request was refused as malformed: {response.text}")
    return None


@schemathesis.check
def documented_error_code(
    ctx: schemathesis.CheckContext,
    response: schemathesis.Response,
    case: schemathesis.Case[Any],
) -> bool | None:
    """A refusal's code is one the operation lists for that status (its response's examples)."""
    code = _error_code(response)
    if code is None or _probe(response, case):
        return None
    documented = case.operation.definition.raw.get("responses", {}).get(str(response.status_code))
    examples = ((documented or {}).get("content") or {}).get("application/json", {})
    codes = set(examples.get("examples") or {})
    if code not in codes:
        raise AssertionError(
            f"{response.status_code} `{code}` is not among the codes documented for it: "
            f"{sorted(codes)}"
        )
    return None


def _probe(response: schemathesis.Response, case: schemathesis.Case[Any]) -> bool:
    """The answer to another method than the operation's (Schemathesis' unsupported_method
    probe): not this operation's to document."""
    return str(response.request.method).upper() != str(case.operation.method).upper()


def _breaks_a_format(case: schemathesis.Case[Any]) -> bool:
    """Whether the body breaks one of the schema's formats. They are part of the schema, but
    Schemathesis' boundary values (its coverage phase) follow the pattern and lengths alone:
    a 63-character name is within `maxLength` yet not 24 visible characters."""
    definition = case.operation.definition.raw.get("requestBody")
    if definition is None or case.body is None:
        return False
    schema = definition["content"]["application/json"]["schema"]
    components = case.operation.schema.raw_schema["components"]
    checker = jsonschema.FormatChecker()
    checker.checks(NAME_FORMAT)(lambda value: not isinstance(value, str) or _valid(value))
    checker.checks(LABEL_FORMAT)(lambda value: not isinstance(value, str) or _valid_label(value))
    validator = jsonschema.Draft202012Validator(
        {**schema, "components": components}, format_checker=checker
    )
    return not validator.is_valid(case.body)


def _error_code(response: schemathesis.Response) -> str | None:
    if not response.headers.get("content-type", [""])[0].startswith("application/json"):
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("code")) if isinstance(error, dict) else None


@dataclass
class FuzzReport:
    requests: dict[str, int] = field(default_factory=lambda: collections.Counter())
    statuses: dict[int, int] = field(default_factory=lambda: collections.Counter())
    # operation -> status -> answers: what each operation was seen to answer
    answers: dict[str, dict[int, int]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    # (operation, check, what it found) -> how to reproduce it (a curl command line)
    violations: dict[tuple[str, str, str], str] = field(default_factory=dict)
    found: int = 0  # violations before deduplication
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        lines = [
            f"{sum(self.requests.values())} requests {dict(self.requests)} in {self.seconds:.0f} s,"
            f" statuses {dict(sorted(self.statuses.items()))}; {self.found} violations,"
            f" {len(self.violations)} distinct"
            f" {dict(collections.Counter(check for _, check, _ in self.violations))}"
        ]
        lines += [
            f"  {op} {check}: {found}\n    {curl}"
            for (op, check, found), curl in self.violations.items()
        ]
        lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines)


def fuzz(
    url: str,
    token: str,
    dictionaries: dict[str, list[str]],
    seed: int = SEED,
    max_examples: int = MAX_EXAMPLES,
) -> FuzzReport:
    """One deterministic run of every phase but the stateful one over the OpenAPI at `url`."""
    config = schemathesis.Config.from_dict(
        {
            "seed": seed,
            "workers": 1,
            "continue-on-failure": True,  # every violation, not only the first of each operation
            # The protocol's auth, the schema's security scheme `bearer` (ignored_auth then checks
            # that an operation needing it refuses a request without it or with another token).
            "auth": {"openapi": {"bearer": {"bearer": token}}},
            "generation": {"max-examples": max_examples, "deterministic": True, "database": "none"},
            "phases": {"stateful": {"enabled": False}},
            "checks": {
                # Replaced by schema_valid_is_not_malformed: a `bad_seat` is state, not form.
                "positive_data_acceptance": {"enabled": False},
                # A 503 is a server error only where the operation does not document it.
                "not_a_server_error": {"expected-statuses": ["1XX", "2XX", "3XX", "4XX", 503]},
            },
            "dictionaries": {name: {"values": values} for name, values in dictionaries.items()},
            "parameters": {name: {"dictionary": name, "probability": 0.5} for name in dictionaries},
            "operations": [
                {
                    # `/claims/mine` is also `/claims/{seat}` with a seat that is not a number:
                    # POST there is that operation's 422, and `Allow` names its methods too.
                    "include-path": "/api/tables/{code}/claims/mine",
                    "checks": {
                        "unsupported_method": {"enabled": False},
                        "allow_header_conformance": {"enabled": False},
                    },
                }
            ],
        }
    )
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", config=config)
    report = FuzzReport()
    started = time.monotonic()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for interaction in event.recorder.interactions.values():
                if interaction.response is None:  # a network error: the errors say it
                    continue
                report.requests[event.phase.name.lower()] += 1
                report.statuses[interaction.response.status_code] += 1
                report.answers[event.recorder.label][interaction.response.status_code] += 1
            for failure in _failures(event):
                report.found += 1
                report.violations.setdefault(failure[:3], failure[3])
        elif isinstance(event, events.NonFatalError | events.FatalError):
            report.errors.append(str(getattr(event, "info", event))[:500])
    report.seconds = time.monotonic() - started
    return report


def _failures(event: events.ScenarioFinished) -> Iterator[tuple[str, str, str, str]]:
    for nodes in event.recorder.checks.values():
        for node in nodes:
            if node.failure_info is None:
                continue
            failure = node.failure_info.failure
            found = " ".join(str(getattr(failure, "message", failure)).split())
            curl = " ".join(node.failure_info.code_sample.split())
            yield event.recorder.label, node.name, found[:160], curl[:2000]


def _post(client: httpx.Client, path: str, token: str | None, body: Any = None) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    r = client.post(path, json=body, headers=auth)
    assert r.is_success, (path, r.status_code, r.text)
    answer: dict[str, Any] = r.json()
    return answer


def _session(client: httpx.Client, name: str) -> str:
    return str(_post(client, "/api/sessions", None, {"name": name})["token"])


def tables_to_fuzz(url: str) -> tuple[str, dict[str, list[str]]]:
    """The fuzzer's token and the codes and table ids to draw: its own lobby, another host's
    lobby, and a match under way (bots in every other seat)."""
    with httpx.Client(base_url=url, timeout=120) as client:
        token = _session(client, "Fuzz")
        mine = _post(client, "/api/tables", token, {"players": 4})
        gil = _session(client, "Gil")
        theirs = _post(client, "/api/tables", gil, {"players": 6})
        mia = _session(client, "Mia")
        playing = _post(client, "/api/tables", mia, {"players": 4})
        for seat in (1, 2, 3):
            _post(client, f"/api/tables/{playing['code']}/bots", mia, {"seat": seat})
        _post(client, f"/api/tables/{playing['code']}/start", mia)
    tables = (mine, theirs, playing)
    return token, {
        "code": [t["code"] for t in tables],
        "table_id": [t["table_id"] for t in tables],
    }


def _tracebacks(stack: Stack) -> int:
    return stack.a.log.read_text(errors="replace").count("Traceback")


@pytest.mark.timeout(600)
def test_the_openapi_tells_the_whole_truth(stack: Stack) -> None:
    token, dictionaries = tables_to_fuzz(stack.a.url)
    before = _tracebacks(stack)
    report = fuzz(stack.a.url, token, dictionaries)
    print(report.summary())
    assert sum(report.requests.values()) >= 300, report.summary()
    assert report.violations == {}, report.summary()
    assert report.errors == [], report.summary()
    assert _tracebacks(stack) == before, report.summary()
