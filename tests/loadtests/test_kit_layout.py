"""What keeps loadtests/ a kit and lab/ apart from it (issue 34): neither imports the tests;
every stack comes from cluster/stack.py, every WebSocket from the one player (and the Locust
users' socket), every percentile from loadtests/figures.py, every printed result through its
`emit`; and no module of the kit is past 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "loadtests"
LAB = REPO / "lab"
MAX_LINES = 400


def _modules(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py"))


def _name(node: ast.AST) -> str:
    """`a.b.c` for a name or an attribute chain, else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}" if _name(node.value) else ""
    return ""


def _calls(path: Path) -> list[tuple[str, ast.Call]]:
    tree = ast.parse(path.read_text())
    return [(_name(n.func), n) for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _where(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_the_kit_and_the_lab_import_nothing_of_the_tests() -> None:
    for path in _modules(KIT, LAB):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not [n for n in names if n.split(".")[0] == "tests"], _where(path)


def test_no_module_of_the_kit_is_past_400_lines() -> None:
    long = {_where(p): n for p in _modules(KIT) if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}


def test_stacks_are_started_by_the_one_builder() -> None:
    parts = {"RayHead", "RedisServer", "RayWorkerNode", "GatewayProcess"}
    for path in _modules(KIT, LAB):
        for name, call in _calls(path):
            assert name.split(".")[-1] not in parts, f"{_where(path)} starts a {name} itself"
            texts = [a.value for a in ast.walk(call) if isinstance(a, ast.Constant)]
            assert not ("cluster" in texts and "up" in texts), f"{_where(path)} runs cluster up"


def test_websockets_are_opened_by_the_one_player() -> None:
    opened = {
        _where(path)
        for path in _modules(KIT, LAB)
        for name, _ in _calls(path)
        if name in ("websockets.connect", "websocket.create_connection")
    }
    # asyncio's player, and the socket of the Locust users (gevent), which share frames.py.
    assert opened == {"loadtests/player.py", "loadtests/users/link.py"}


def test_one_percentile() -> None:
    defined = {
        _where(path)
        for path in _modules(KIT, LAB)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name in ("percentile", "pct", "quantile")
    }
    assert defined == {"loadtests/figures.py"}


def test_results_are_printed_one_way() -> None:
    for path in _modules(KIT, LAB):
        for name, call in _calls(path):
            if name == "print":
                inner = {_name(a.func) for a in call.args if isinstance(a, ast.Call)}
                assert "json.dumps" not in inner or path.name == "figures.py", _where(path)
