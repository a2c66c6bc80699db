"""The web client's files as the gateway serves them (gateway/client_files.py, client_page.py,
static_files.py, routes/pages.py), without Ray: compression by what the browser takes, ETags
and 304s, `immutable` only for the URL of a file's current version, the page rendered with
every module and catalog versioned and preloaded, its CSP allowing exactly its import map, and
the service worker's list of the whole shell and nothing else."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import shutil
import warnings
from pathlib import Path

import brotli
import pytest
from fastapi import FastAPI

from gateway.app import add_web_client
from gateway.client_files import STATIC, ClientFiles
from gateway.client_page import MAPPED, STYLES, PageError, WebClient
from gateway.security_headers import SecurityHeaders
from gateway.static_files import FOREVER, NOT_THIS, REVALIDATE, chosen_encoding

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

NOT_SHELL = {"README.md", "index.html", "sw.js"}


def client_for(root: Path = STATIC) -> TestClient:
    app = FastAPI()
    add_web_client(app, root)
    app.add_middleware(SecurityHeaders)
    return TestClient(app)


@pytest.fixture(scope="module")
def client() -> TestClient:
    return client_for()


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the client's files that a test may change."""
    root = tmp_path / "static"
    shutil.copytree(STATIC, root)
    return root


def page_text(client: TestClient) -> str:
    r = client.get("/", headers={"accept-encoding": "identity"})
    assert r.status_code == 200
    return str(r.text)


def shell(client: TestClient) -> dict[str, object]:
    worker = client.get("/sw.js").text
    found = re.match(r"const SHELL = (.*);\n", worker)
    assert found, worker[:200]
    listed: dict[str, object] = json.loads(found.group(1))
    return listed


def test_accept_encoding_picks_brotli_then_gzip_and_honours_q_zero() -> None:
    assert chosen_encoding("gzip, deflate, br, zstd") == "br"
    assert chosen_encoding("gzip") == "gzip"
    assert chosen_encoding("br;q=0, gzip;q=0.5") == "gzip"
    assert chosen_encoding("br;q=0, gzip;q=0") is None
    assert chosen_encoding("*") == "br"
    assert chosen_encoding("identity") is None
    assert chosen_encoding("") is None


@pytest.mark.parametrize(
    ("path", "type_"),
    [
        ("/static/js/app.js", "text/javascript"),
        ("/static/css/base.css", "text/css"),
        ("/static/i18n/en.json", "application/json"),
        ("/static/manifest.webmanifest", "application/manifest+json"),
        ("/static/icons/icon.svg", "image/svg+xml"),
        ("/", "text/html"),
    ],
)
def test_text_is_compressed_as_the_browser_asks(client: TestClient, path: str, type_: str) -> None:
    plain = client.get(path, headers={"accept-encoding": "identity"})
    assert plain.headers["content-type"].startswith(type_)
    assert "content-encoding" not in plain.headers
    assert plain.headers["vary"] == "accept-encoding"
    for coding, decode in (("br", brotli.decompress), ("gzip", gzip.decompress)):
        # The test client would undo the coding itself: read the raw bytes instead.
        with client.stream("GET", path, headers={"accept-encoding": coding}) as r:
            raw = b"".join(r.iter_raw())
            assert r.headers["content-encoding"] == coding
            assert r.headers["etag"].endswith(f'-{coding}"')
        assert len(raw) < 0.9 * len(plain.content)
        assert decode(raw) == plain.content


def test_pictures_already_compressed_are_sent_as_they_are(client: TestClient) -> None:
    r = client.get("/static/icons/icon-512.png", headers={"accept-encoding": "br, gzip"})
    assert r.headers["content-type"] == "image/png"
    assert "content-encoding" not in r.headers


def test_cache_headers_promise_forever_only_for_the_current_version(client: TestClient) -> None:
    digest = hashlib.sha256((STATIC / "js/app.js").read_bytes()).hexdigest()[:12]
    current = client.get(f"/static/js/app.js?v={digest}")
    assert current.headers["cache-control"] == FOREVER == "public, max-age=31536000, immutable"
    other = client.get("/static/js/app.js?v=0123456789ab")
    assert other.status_code == 200  # an old page still gets a module, just not for keeps
    assert other.headers["cache-control"] == NOT_THIS == "no-store"
    assert client.get("/static/js/app.js").headers["cache-control"] == REVALIDATE == "no-cache"
    for path in ("/", "/t/ABCDEF", "/replay/t-123", "/sw.js", "/favicon.ico"):
        assert client.get(path).headers["cache-control"] == "no-cache", path


def test_an_etag_held_is_answered_304_whatever_its_coding(client: TestClient) -> None:
    for path in ("/static/js/app.js", "/", "/sw.js"):
        first = client.get(path, headers={"accept-encoding": "br"})
        for held in (first.headers["etag"], first.headers["etag"].replace("-br", "")):
            again = client.get(path, headers={"if-none-match": held, "accept-encoding": "br"})
            assert again.status_code == 304, (path, held)
            assert again.content == b""
            assert again.headers["etag"] == held
        changed = client.get(path, headers={"if-none-match": '"0123456789ab"'})
        assert changed.status_code == 200


def test_only_files_of_the_client_are_served(client: TestClient) -> None:
    for path in (
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/js",
        "/static/js/",
        "/static/nothing.js",
        # Served at their own routes only: the page makes sense rendered, and a worker's scope
        # is the folder it comes from.
        "/static/index.html",
        "/static/sw.js",
    ):
        assert client.get(path).status_code == 404, path
    assert client.post("/static/js/app.js").status_code == 405
    assert client.head("/static/js/app.js").status_code == 200


def test_the_page_names_every_file_by_its_version(client: TestClient) -> None:
    text = page_text(client)
    refs = re.findall(r'(?:href|src)="(/static/[^"]+)"', text)
    assert refs
    for url in refs:
        path, _, query = url.partition("?")
        rel = path.removeprefix("/static/")
        if 'rel="manifest"' in text.split(url)[0].rsplit("<", 1)[-1]:
            continue  # the manifest keeps its address: browsers identify installed apps by it
        if rel.startswith("icons/"):
            continue  # icons are asked for by the browser, not by the page's code
        body = client.get(path).content if rel == STYLES else (STATIC / rel).read_bytes()
        digest = hashlib.sha256(body).hexdigest()[:12]
        assert query == f"v={digest}", url
        assert client.get(url).headers["cache-control"] == FOREVER, url
    imports = json.loads(re.search(r'"importmap">(.*?)</script>', text, re.DOTALL).group(1))  # type: ignore[union-attr]
    mapped = imports["imports"]
    for rel in (p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file()):
        if MAPPED.match(rel) and rel != "sw.js":
            assert mapped[f"/static/{rel}"].startswith(f"/static/{rel}?v="), rel
    for bare in ("preact", "preact/hooks", "htm", "qrcode-generator"):
        assert "?v=" in mapped[bare]


def test_the_page_preloads_the_whole_module_graph_after_its_import_map(client: TestClient) -> None:
    text = page_text(client)
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', text)
    # Every module main.js reaches, read here with a plain parser of our own (the browser test
    # compares the same list with what Chromium actually loads).
    graph = {"js/main.js"}
    todo = ["js/main.js"]
    bare = {
        "preact": "vendor/preact.module.js",
        "preact/hooks": "vendor/preact-hooks.module.js",
        "htm": "vendor/htm.module.js",
        "qrcode-generator": "vendor/qrcode-generator.module.js",
    }
    while todo:
        module = todo.pop()
        source = (STATIC / module).read_text()
        for spec in re.findall(r'(?:^|;)\s*(?:import|export)[^"]*?from\s*"([^"]+)"', source, re.M):
            target = bare.get(spec) or str(Path(module).parent / spec).replace("/./", "/")
            if target not in graph:
                graph.add(target)
                todo.append(target)
    assert {u.split("?")[0].removeprefix("/static/") for u in preloads} == graph - {"js/main.js"}
    first = text.index('<link rel="modulepreload" href=')
    assert text.index('<script type="importmap">') < first < text.index('<script type="module"')


def test_the_stylesheets_are_one_file_in_the_order_linked(client: TestClient) -> None:
    linked = re.findall(
        r'<link rel="stylesheet" href="/static/(css/[^"]+)">', (STATIC / "index.html").read_text()
    )
    assert len(linked) > 5
    text = page_text(client)
    (only,) = re.findall(r'<link rel="stylesheet" href="([^"]+)">', text)
    assert only.startswith(f"/static/{STYLES}?v=")
    merged = client.get(only, headers={"accept-encoding": "identity"}).text
    at = [merged.index(f"/* {rel} */\n" + (STATIC / rel).read_text().rstrip()) for rel in linked]
    assert at == sorted(at)
    assert client.get(only).headers["cache-control"] == FOREVER
    assert "<!--" not in text  # the template's notes stay in the repository


def test_the_pages_policy_allows_its_own_import_map_and_nothing_inline(client: TestClient) -> None:
    r = client.get("/t/ABCDEF", headers={"accept-encoding": "identity"})
    csp = r.headers["content-security-policy"]
    body = re.search(r'<script type="importmap">(.*?)</script>', r.text, re.DOTALL)
    assert body is not None
    digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
    assert f"script-src 'self' 'sha256-{digest}';" in csp
    assert "unsafe-inline" not in csp
    assert "worker-src 'self'" in csp
    assert "manifest-src 'self'" in csp
    assert len(re.findall(r"<script\b", r.text)) == 2  # the import map and the entry module
    # Other files carry the policy without any inline allowance.
    assert "sha256" not in client.get("/static/help/en.html").headers["content-security-policy"]


def test_the_service_workers_list_is_the_whole_shell_and_nothing_else(client: TestClient) -> None:
    listed = shell(client)
    files = listed["files"]
    assert isinstance(files, list)
    urls = [f["url"] for f in files]
    assert urls[0] == "/"
    merged = set(re.findall(r'href="/static/(css/[^"]+)"', (STATIC / "index.html").read_text()))
    on_disk = {
        p.relative_to(STATIC).as_posix()
        for p in STATIC.rglob("*")
        if p.is_file() and p.name not in NOT_SHELL and not p.name.startswith("LICENSE")
    }
    kept = {u.split("?")[0].removeprefix("/static/") for u in urls[1:]}
    assert kept == on_disk - merged | {STYLES}
    assert not [u for u in urls if u.startswith(("/api", "/ws", "/replay", "/t/"))]
    # The emoji pictures go through the import map too (js/emoji.js): cached for good.
    pictures = [u for u in urls if "/vendor/twemoji/" in u]
    assert len(pictures) > 24
    assert all("?v=" in u for u in pictures)
    page = page_text(client)
    for entry in files:
        r = client.get(entry["url"], headers={"accept-encoding": "br"})
        assert r.status_code == 200, entry
        assert r.headers["etag"].strip('"').split("-")[0] == entry["digest"], entry
        if "?v=" in entry["url"]:
            assert entry["url"] in page or entry["url"].startswith("/static/i18n/"), entry


def test_a_change_to_any_file_makes_a_new_version_of_page_and_worker(copy: Path) -> None:
    files = ClientFiles(copy, rescan_every_s=0)
    client = WebClient(files)
    page, worker = client.page(), client.worker()
    assert page is not None
    assert worker is not None
    before = re.search(rb"/static/js/table\.js\?v=(\w+)", page.file.body)
    assert before is not None
    (copy / "js/table.js").write_text((copy / "js/table.js").read_text() + "\n// changed\n")
    page2, worker2 = client.page(), client.worker()
    assert page2 is not None
    assert worker2 is not None
    after = re.search(rb"/static/js/table\.js\?v=(\w+)", page2.file.body)
    assert after is not None
    assert after.group(1) != before.group(1)
    assert worker2.digest != worker.digest  # the browser installs the new worker
    # A new file joins the shell without anyone listing it.
    (copy / "vendor").joinpath("new-picture.svg").write_text("<svg/>")
    worker3 = client.worker()
    assert worker3 is not None
    assert b'"/static/vendor/new-picture.svg"' in worker3.body


def test_a_module_added_is_preloaded_and_a_missing_one_stops_the_page(copy: Path) -> None:
    (copy / "js/extra.js").write_text('import{h as x}from"preact";\nexport const y = 1;\n')
    (copy / "js/more.js").write_text(
        'import {\n  y,\n} from "./extra.js";\nexport * from "../vendor/htm.module.js";\n'
    )
    main = copy / "js/main.js"
    main.write_text('import "./more.js";\n' + main.read_text())
    page = WebClient(ClientFiles(copy)).page()
    assert page is not None
    assert {"js/more.js", "js/extra.js", "vendor/htm.module.js"} <= set(page.preloads)
    main.write_text('import { gone } from "./gone.js";\n' + main.read_text())
    with pytest.raises(PageError, match=r"gone\.js"):
        WebClient(ClientFiles(copy))


def test_favicon_and_manifest_answer(client: TestClient) -> None:
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    manifest = client.get("/static/manifest.webmanifest")
    assert manifest.headers["content-type"] == "application/manifest+json"
    assert manifest.json()["start_url"] == "/"
