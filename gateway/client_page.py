"""The page the gateway serves at `/`, `/t/{code}` and `/replay/{table_id}`: index.html with
every file it loads named by its version, so that all of it may be cached for good.

- Stylesheets, preloads and the entry script get `?v=<digest>`.
- The import map gains one entry per module and catalog (`"/static/js/app.js":
  "/static/js/app.js?v=…"`): import maps remap URL-like specifiers too, so the modules' own
  relative imports (`./app.js`) and `import.meta.resolve("/static/i18n/en.json")` reach the
  versioned URLs without a build step.
- `<link rel="modulepreload">` for the entry's whole static import graph, read from the modules
  themselves, replaces the `<!-- modulepreload -->` marker (after the import map: a module
  fetched before it would make the browser ignore the map). The browser then asks for every
  module at once instead of discovering them one level of imports at a time.
- The stylesheets it links, one per concern, are served as one (`css/page.css`, their texts in
  the order linked, which the cascade relies on): each stylesheet blocks the first paint, and
  over HTTP/1.1 a browser fetches six at a time.

The service worker's list (`shell`) comes from the same files, so neither can go stale when a
file is added.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

from gateway.client_files import ClientFile, ClientFiles, digest_of
from gateway.security_headers import inline_script_hashes

PAGE = "index.html"
MARKER = "<!-- modulepreload -->"
# The template's notes for developers (the marker is replaced before these go).
COMMENT = re.compile(r"\n?[ \t]*<!--.*?-->", re.DOTALL)
IMPORT_MAP = re.compile(r'(<script type="importmap">)(.*?)(</script>)', re.DOTALL)
STYLESHEET = re.compile(r'\n?[ \t]*<link rel="stylesheet" href="/static/(css/[^"?#]+)">')
# The stylesheets' one file: served by the gateway, never on disk.
STYLES = "css/page.css"
# <link rel="stylesheet|preload" href="/static/…"> and <script src="/static/…">.
VERSIONED_REF = re.compile(
    r'(<link\b[^>]*\brel="(?:stylesheet|preload)"[^>]*\bhref="|<script\b[^>]*\bsrc=")'
    r'/static/([^"?#]+)"'
)
ENTRY = re.compile(r'<script\b[^>]*\btype="module"[^>]*\bsrc="/static/([^"?#]+)')
# Static imports and re-exports, minified or not: `import x from "…"`, `import{a}from"…"`,
# `import "…"`, `export * from "…"`. Dynamic `import("…")` is left to load when asked.
IMPORTS = re.compile(
    r"""(?:^|[;}\n])\s*(?:import|export)\b[\s\w$*{},]*?\bfrom\s*["']([^"'\n]+)["']"""
    r"""|(?:^|[;}\n])\s*import\s*["']([^"'\n]+)["']"""
)
# What the import map names by version besides what it maps already: every module, the
# catalogs (js/i18n.js fetches them through import.meta.resolve) and the emoji pictures
# (js/emoji.js likewise), so that all of them are immutable in a browser's cache.
MAPPED = re.compile(r"^(?:.*\.js|i18n/[^/]+\.json|vendor/twemoji/[^/]+\.svg)$")
# Not part of the shell the service worker keeps: the notes for developers and the licences
# (shipped, not shown).
NOT_SHELL = re.compile(r"(?:^|/)(?:README\.md|LICENSE[^/]*)$")
# Files served at a route of their own, never under /static/: the page only makes sense
# rendered, and a worker's scope is the folder it is served from.
ELSEWHERE = {PAGE: "/", "sw.js": "/sw.js"}


class PageError(RuntimeError):
    """index.html lacks what the gateway fills in, or names a file that is not there."""


@dataclass(frozen=True)
class Page:
    file: ClientFile  # the page as served
    script_hashes: tuple[str, ...]  # CSP sources of its inline scripts (the import map)
    preloads: tuple[str, ...]  # static paths of the modules preloaded, entry first
    versioned: frozenset[str]  # static paths the page loads by versioned URL
    made: dict[str, ClientFile]  # files the page's rendering made (STYLES), by static path
    merged: tuple[str, ...]  # the stylesheets STYLES is made of, in order


def merge_styles(text: str, current: dict[str, ClientFile]) -> tuple[str, ClientFile, list[str]]:
    """The page with its stylesheet links replaced by one to STYLES, that file, and the
    stylesheets it merges."""
    merged = STYLESHEET.findall(text)
    if not merged or STYLES in current:
        raise PageError(f"{PAGE} needs stylesheets under /static/css/, and {STYLES} not on disk")
    parts = []
    for rel in merged:
        if rel not in current:
            raise PageError(f"{PAGE} names /static/{rel}, which is missing")
        parts.append(f"/* {rel} */\n".encode() + current[rel].body.rstrip() + b"\n")
    styles = ClientFile(b"".join(parts), current[merged[0]].media_type)
    first = STYLESHEET.search(text)
    assert first is not None
    link = f'\n  <link rel="stylesheet" href="/static/{STYLES}">'
    text = text[: first.start()] + link + STYLESHEET.sub("", text[first.end() :])
    return text, styles, merged


def static_path(url: str, importer: str | None = None) -> str:
    """The path under /static/ that `url` names, resolved from the module `importer`."""
    if url.startswith(("./", "../")) and importer is not None:
        url = "/static/" + posixpath.normpath(posixpath.join(posixpath.dirname(importer), url))
    if not url.startswith("/static/"):
        raise PageError(f"{url!r} (imported by {importer}) is not a file of the client")
    return url[len("/static/") :].split("?")[0]


def module_graph(entry: str, files: dict[str, ClientFile], bare: dict[str, str]) -> list[str]:
    """Every module `entry` imports statically, directly or not, in breadth-first order."""
    order, queue = [entry], [entry]
    while queue:
        module = queue.pop(0)
        found = files.get(module)
        if found is None:
            raise PageError(f"{module} is imported but missing")
        for m in IMPORTS.finditer(found.body.decode()):
            spec = m.group(1) or m.group(2)
            target = static_path(bare.get(spec, spec), module)
            if target not in order:
                order.append(target)
                queue.append(target)
    return order


def render(files: ClientFiles) -> Page:
    current = files.current()
    template = current.get(PAGE)
    if template is None:
        raise PageError(f"{PAGE} is missing")
    text = template.body.decode()
    found = IMPORT_MAP.search(text)
    entry = ENTRY.search(text)
    if found is None or entry is None or MARKER not in text:
        raise PageError(f"{PAGE} needs an import map, a module script and a {MARKER} marker")
    bare: dict[str, str] = json.loads(found.group(2))["imports"]
    text, styles, merged = merge_styles(text, current)
    versioned: set[str] = set()

    def version(rel: str) -> str:
        if rel == STYLES:
            versioned.add(rel)
            return f"/static/{STYLES}?v={styles.digest}"
        if rel not in current:
            raise PageError(f"{PAGE} names /static/{rel}, which is missing")
        versioned.add(rel)
        return files.url(rel)

    imports = {spec: version(static_path(url)) for spec, url in bare.items()}
    imports |= {f"/static/{rel}": version(rel) for rel in sorted(current) if MAPPED.match(rel)}
    import_map = json.dumps({"imports": imports}, indent=2)
    preloads = module_graph(entry.group(1), current, bare)
    links = "\n  ".join(f'<link rel="modulepreload" href="{version(p)}">' for p in preloads[1:])
    text = VERSIONED_REF.sub(lambda m: m.group(1) + version(m.group(2)) + '"', text)
    text = IMPORT_MAP.sub(lambda m: f"{m.group(1)}\n{import_map}\n  {m.group(3)}", text)
    body = COMMENT.sub("", text.replace(MARKER, links)).encode()
    return Page(
        file=ClientFile(body, template.media_type),
        script_hashes=tuple(inline_script_hashes(body)),
        preloads=tuple(preloads),
        versioned=frozenset(versioned),
        made={STYLES: styles},
        merged=tuple(merged),
    )


def shell(files: ClientFiles, page: Page) -> dict[str, object]:
    """What the service worker keeps for offline use: the page (under "/") and every file of
    the client but the developers' notes, the licences and the stylesheets merged into STYLES
    (which it keeps instead), each under the URL the page asks for it by (versioned or not)
    with the digest the answer's ETag must carry. `version` changes whenever any of it does,
    and names the worker's cache."""
    kept = {
        rel: f
        for rel, f in files.current().items()
        if rel not in ELSEWHERE and rel not in page.merged and not NOT_SHELL.search(rel)
    } | page.made
    entries = [{"url": "/", "digest": page.file.digest}] + [
        {"url": f"/static/{rel}?v={f.digest}" if rel in page.versioned else f"/static/{rel}"}
        | {"digest": f.digest}
        for rel, f in sorted(kept.items())
    ]
    version = digest_of(json.dumps(entries, sort_keys=True).encode())
    return {"version": version, "files": entries}


WORKER = "sw.js"


class WebClient:
    """The page and the service worker as served now: derived from the files once, and again
    whenever one of them changes. None when the client is not built in (no index.html)."""

    def __init__(self, files: ClientFiles) -> None:
        self.files = files
        self._generation = -1
        self._page: Page | None = None
        self._worker: ClientFile | None = None
        self._derive()  # a page that cannot be rendered stops the gateway at startup

    def _derive(self) -> None:
        current = self.files.current()
        if self._generation == self.files.generation:
            return
        page = render(self.files) if PAGE in current else None
        worker = current.get(WORKER)
        if page is not None and worker is not None:
            # The list first: any change to it changes the worker's bytes, which is what makes
            # browsers install the new worker.
            prelude = f"const SHELL = {json.dumps(shell(self.files, page))};\n"
            worker = ClientFile(prelude.encode() + worker.body, worker.media_type)
        self._page, self._worker = page, worker
        self._generation = self.files.generation

    def page(self) -> Page | None:
        self._derive()
        return self._page

    def worker(self) -> ClientFile | None:
        self._derive()
        return self._worker

    def static(self, rel: str) -> ClientFile | None:
        """The file at /static/`rel`: one of the folder's, or one the page's rendering made."""
        page = self.page()
        made = page.made.get(rel) if page is not None else None
        return made or self.files.get(rel)
