"""The OpenAPI, read without a server: every refusal in the one error model with its codes,
the headers and media types the gateway sends, the constraints it enforces; and, for every
route, each error code its code can answer is documented (read from the code itself: the
route, its dependencies, the gateway functions it calls and, for a command sent to a table, the
engine's rules for that command). tests/cluster/test_openapi_fuzz.py checks the same OpenAPI
against a live gateway."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from actors.table_records import CODE_ALPHABET, CODE_LENGTH, new_code
from cluster.settings import Settings
from engine import table as engine_table
from engine.commands import SEATLESS, Command
from engine.errors import ErrorBody, ErrorCode
from engine.state import TableState
from gateway.app import create_app
from gateway.names import NAME_PATTERN, check_name
from gateway.services import Services

METHODS = ("get", "put", "post", "delete", "patch")


@pytest.fixture(scope="module")
def app() -> FastAPI:
    return create_app(Settings(public_metrics=True, docs=True))


@pytest.fixture(scope="module")
def spec(app: FastAPI) -> dict[str, Any]:
    return app.openapi()


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method in METHODS
    ]


def documented_codes(op: dict[str, Any]) -> dict[str, int]:
    """code -> status, from each refusal's examples."""
    return {
        code: int(status)
        for status, response in op["responses"].items()
        for code in (response.get("content", {}).get("application/json", {}).get("examples", {}))
    }


def test_every_refusal_is_the_error_model_with_its_codes(spec: dict[str, Any]) -> None:
    for method, path, op in operations(spec):
        for status, response in op["responses"].items():
            if status.startswith("2") or status == "304" or (path == "/readyz" and status == "503"):
                continue
            content = response["content"]
            if status == "400":  # Starlette's own answer to a Host not served
                assert list(content) == ["text/plain"], (method, path)
                continue
            # A page's address of the wrong shape is the page, with 404 (routes/pages.py).
            page_404 = status == "404" and "pages" in op["tags"] and "{" in path
            want = ["application/json", "text/html"] if page_404 else ["application/json"]
            assert list(content) == want, (method, path, status)
            media = content["application/json"]
            assert media["schema"] == {"$ref": "#/components/schemas/ErrorOut"}, (path, status)
            codes = list(media["examples"])
            assert codes, (method, path, status)
            for code in codes:
                assert f"`{code}`" in response["description"], (method, path, code)
                assert media["examples"][code]["value"]["error"]["code"] == code
    error = spec["components"]["schemas"]["ErrorOut"]
    assert error["required"] == ["error"]
    assert spec["components"]["schemas"]["ErrorDetail"]["required"] == ["code", "message"]
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_refusals_carry_their_headers(spec: dict[str, Any]) -> None:
    for method, path, op in operations(spec):
        for status, response in op["responses"].items():
            headers = response.get("headers", {})
            if status in ("429", "503") and path != "/readyz":
                assert headers["Retry-After"]["required"], (method, path, status)
            if status == "401":
                assert headers["WWW-Authenticate"]["schema"]["enum"] == ["Bearer"]


def test_the_media_types_are_what_is_sent(spec: dict[str, Any]) -> None:
    def ok_types(path: str) -> list[str]:
        ok = next(r for s, r in spec["paths"][path]["get"]["responses"].items() if s == "200")
        return list(ok["content"])

    assert ok_types("/metrics") == ["text/plain"]
    for page in ("/", "/t/{code}", "/replay/{table_id}"):
        assert ok_types(page) == ["text/html"]
    for path in ("/api/emojis", "/healthz", "/readyz", "/api/replays/{table_id}"):
        assert ok_types(path) == ["application/json"]


def test_every_operation_says_what_the_middleware_answers(spec: dict[str, Any]) -> None:
    for method, path, op in operations(spec):
        codes = documented_codes(op)
        assert codes["too_large"] == 413, (method, path)
        assert ("400" in op["responses"]) == (path not in ("/healthz", "/readyz")), path
        has_input = "requestBody" in op or any(
            p["schema"].get("type") != "string" or "enum" in p["schema"]
            for p in op.get("parameters", [])
        )
        assert (codes.get("bad_message") == 422) == has_input, (method, path)


def test_auth_is_the_bearer_scheme(spec: dict[str, Any]) -> None:
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "the token from POST /api/sessions, as `Authorization: Bearer <token>`",
    }
    for method, path, op in operations(spec):
        needs = "bad_token" in documented_codes(op)
        security = op.get("security", [])
        assert ({"bearer": []} in security) == needs, (method, path)
        # Everyone's view of a replay needs no session; its own view does.
        assert ({} in security) == (path == "/api/replays/{table_id}"), (method, path)


def test_the_constraints_the_server_enforces_are_in_the_schema(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    name = schemas["NewSession"]["properties"]["name"]
    assert (name["minLength"], name["maxLength"], name["format"]) == (1, 64, "quatro-name")
    assert name["pattern"] == NAME_PATTERN
    assert (
        schemas["BotIn"]["properties"]["seat"] | {"minimum": 0, "maximum": 7}
        == (schemas["BotIn"]["properties"]["seat"])
    )
    deal = schemas["Deal"]["properties"]
    assert (deal["hands"]["minItems"], deal["hands"]["maxItems"]) == (4, 8)
    assert deal["center"]["items"]["enum"] == ["A", "K", "Q", "J", "10", "9", "8", "7", "6"]
    assert schemas["Scenario"]["properties"]["deals"]["maxItems"] == 64
    for _, path, op in operations(spec):
        for param in op.get("parameters", []):
            if param["name"] == "seat":
                assert (param["schema"]["minimum"], param["schema"]["maximum"]) == (0, 7), path
            if param["name"] == "code" and path.startswith("/api/"):
                assert param["schema"]["pattern"] == "^[2-9A-HJKMNP-Za-hjkmnp-z]{6}$", path


def test_a_table_code_matches_its_pattern_and_nothing_else() -> None:
    pattern = re.compile("^[2-9A-HJKMNP-Za-hjkmnp-z]{6}$")
    assert CODE_LENGTH == 6
    assert all(pattern.match(new_code()) for _ in range(200))
    for ch in map(chr, range(0x20, 0x7F)):
        assert bool(pattern.match(ch * 6)) == (ch.upper() in CODE_ALPHABET), ch


def test_the_name_pattern_refuses_only_what_the_rule_refuses() -> None:
    """Sound: a character the pattern refuses is refused by the name rule wherever it stands,
    so no valid name is outside the pattern (the format says the rest of the rule)."""
    pattern = re.compile(NAME_PATTERN)
    for cp in range(0x10000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or pattern.match(f"a{ch}b"):
            continue
        for name in (f"a{ch}b", f"{ch}ab", f"ab{ch}"):
            with pytest.raises(ValueError, match=r"name|joiner|tag|marks|bot"):
                check_name(name)
    for name in ("Ana", "Ana 👩‍💻", "🇭🇹 Jean", "مريم", "Zoë", "  Ti  Jak  ", "a" * 24):
        assert pattern.match(name), name
        check_name(name)
    for blank in ("", " ", "\t\u3000", "\u200b"):
        assert not pattern.match(blank)


# -- Each route's codes, read from its code -------------------------------------------------------
# Fields of `Services` that only hold settings: everything else reaches Redis or a table, which
# may be out of reach (503 `unavailable`, gateway.errors.BACKEND_DOWN).
PLAIN_FIELDS = frozenset({"settings", "gateway", "proxies", "origins"})


@dataclass
class Reach:
    """What a route's code can get to: the codes it names, the commands it sends to a table,
    the services it uses and the directory's methods it calls."""

    codes: set[str] = field(default_factory=set)
    commands: set[type[Command]] = field(default_factory=set)
    services: set[str] = field(default_factory=set)
    directory: set[str] = field(default_factory=set)
    seen: set[Callable[..., Any]] = field(default_factory=set)


def _source_tree(fn: Any) -> ast.AST:
    """The code of `fn` (or a module), without its decorators: a route's `responses=` names the
    codes it documents, not those it answers."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.decorator_list = []
    return tree


def _names(fn: Callable[..., Any]) -> dict[str, Any]:
    closure = inspect.getclosurevars(fn)
    return {**fn.__globals__, **closure.nonlocals}


def _take(value: Any, reach: Reach, prefix: str) -> None:
    """What a name the code uses stands for."""
    if isinstance(value, ErrorCode):
        reach.codes.add(value.value)
    elif isinstance(value, ErrorBody):
        reach.codes.add(value.code)
    elif isinstance(value, dict | tuple | frozenset | set | list):
        for item in value:
            if isinstance(item, ErrorCode | ErrorBody):
                _take(item, reach, prefix)
    elif inspect.isclass(value) and issubclass(value, Command) and value is not Command:
        reach.commands.add(value)
    elif inspect.isfunction(value):
        _walk(value, reach, prefix)


SERVICE_TYPES = typing.get_type_hints(Services)


def _walk(fn: Callable[..., Any], reach: Reach, prefix: str = "gateway.") -> None:
    """The codes `fn` names, and what it calls in modules under `prefix`; `svc.<service>.<method>`
    is followed through the service's type."""
    if fn in reach.seen or not fn.__module__.startswith(prefix):
        return
    reach.seen.add(fn)
    names = _names(fn)
    for node in ast.walk(_source_tree(fn)):
        if isinstance(node, ast.Name):
            _take(names.get(node.id), reach, prefix)
        elif isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id == "ErrorCode":
                reach.codes.add(ErrorCode[node.attr].value)
            elif isinstance(base, ast.Name) and inspect.ismodule(names.get(base.id)):
                _take(getattr(names[base.id], node.attr, None), reach, prefix)
            elif isinstance(base, ast.Name) and base.id == "svc":
                reach.services.add(node.attr)
            elif (
                isinstance(base, ast.Attribute)
                and isinstance(base.value, ast.Name)
                and base.value.id == "svc"
            ):
                reach.services.add(base.attr)
                if base.attr == "directory":
                    reach.directory.add(node.attr)
                service = SERVICE_TYPES.get(base.attr)
                method = getattr(service, node.attr, None) if inspect.isclass(service) else None
                if inspect.isfunction(method):
                    _walk(method, reach, prefix)
            elif prefix == "engine." and inspect.isfunction(getattr(TableState, node.attr, None)):
                _walk(getattr(TableState, node.attr), reach, prefix)  # state.require_phase(...)


def _handlers() -> dict[str, ast.Lambda]:
    """engine.table's one line per command, by the command's name."""
    tree = _source_tree(engine_table)
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_HANDLERS":
            assert isinstance(node.value, ast.Dict)
            return {
                key.id: value
                for key, value in zip(node.value.keys, node.value.values, strict=True)
                if isinstance(key, ast.Name) and isinstance(value, ast.Lambda)
            }
    raise AssertionError("engine/table.py has no _HANDLERS")


def engine_codes(command: type[Command]) -> set[str]:
    """The codes the rules can refuse `command` with: its handler's, and a command played from
    a seat is refused `bad_seat` by `Table.apply` when that seat is not the player's."""
    reach = Reach()
    rule = _handlers()[command.__name__]
    for node in ast.walk(rule.body):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = vars(engine_table).get(node.value.id)
            if inspect.ismodule(module):
                _take(getattr(module, node.attr), reach, "engine.")
    if command not in SEATLESS:
        reach.codes.add(ErrorCode.BAD_SEAT.value)
    return reach.codes


def api_routes(app: FastAPI) -> list[Any]:
    """Every REST route as the app serves it (its router's prefix included)."""
    return [
        context
        for context in iter_route_contexts(app.routes)
        if isinstance(context.original_route, APIRoute) and context.include_in_schema
    ]


def route_codes(route: Any) -> set[str]:
    """Every code `route` can answer, from its code."""
    reach = Reach()
    calls: list[Callable[..., Any]] = [route.endpoint]
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        for dep in dependant.dependencies:
            if inspect.isfunction(dep.call):
                calls.append(dep.call)
            pending.append(dep)
    for fn in calls:
        _walk(fn, reach)
    codes = set(reach.codes)
    for command in reach.commands:
        codes |= engine_codes(command)
        # What the table actor answers any command (actors/requests.py, link_server.py): a
        # table not open, a request it could not serve, and for a command played from a
        # seat, a player holding none there.
        codes |= {ErrorCode.UNKNOWN_TABLE.value, ErrorCode.INTERNAL.value}
        if command not in SEATLESS:
            codes.add(ErrorCode.NO_SEAT.value)
    if reach.services - PLAIN_FIELDS:
        codes.add(ErrorCode.UNAVAILABLE.value)
    if "create" in reach.directory:  # every table slot taken: actors.directory.NoRoom
        codes.add(ErrorCode.NO_ROOM.value)
    # A route that tries the next table on some refusals says which (quick play).
    return codes - set(getattr(inspect.getmodule(route.endpoint), "RETRY_CODES", ()))


# Said by the middleware and FastAPI's validation on any route (test above), not by its code.
EVERY_ROUTE = frozenset({ErrorCode.TOO_LARGE.value, ErrorCode.BAD_MESSAGE.value})


def test_each_route_documents_exactly_the_codes_its_code_can_answer(
    app: FastAPI, spec: dict[str, Any]
) -> None:
    missing: dict[str, list[str]] = {}
    stale: dict[str, list[str]] = {}
    for route in api_routes(app):
        for method in route.methods:
            op = spec["paths"][route.path_format][method.lower()]
            documented = set(documented_codes(op))
            answered = route_codes(route)
            if "503" in op["responses"] and "unavailable" not in documented:
                answered.discard("unavailable")  # /readyz: its checks say so in a 503 of its own
            where = f"{method} {route.path_format}"
            if absent := sorted(answered - documented):
                missing[where] = absent
            if extra := sorted(documented - answered - EVERY_ROUTE):
                stale[where] = extra
    assert missing == {}
    assert stale == {}


def test_the_reading_of_a_route_finds_what_it_should(app: FastAPI) -> None:
    """The reading itself, on routes whose codes are known: a rule's refusal deep in the engine,
    a quota's, the session's, a replay's refusals named in a table of the route's module."""
    by_path = {(r.path_format, m): r for r in api_routes(app) for m in r.methods}
    start = route_codes(by_path[("/api/tables/{code}/start", "POST")])
    assert {"table_not_full", "wrong_phase", "not_host", "not_allowed", "no_seat"} <= start
    claim = route_codes(by_path[("/api/tables/{code}/claims/{seat}", "POST")])
    assert {"rate_limited", "not_watching", "already_claimed", "bad_token"} <= claim
    assert "no_seat" not in claim  # asked without a seat
    replay = route_codes(by_path[("/api/replays/{table_id}", "GET")])
    assert {"unknown_replay", "not_finished", "no_seat", "watching_off", "bad_token"} <= replay
    assert {"no_room", "too_many_lobbies"} <= route_codes(by_path[("/api/tables", "POST")])
    assert route_codes(by_path[("/api/emojis", "GET")]) == set()
