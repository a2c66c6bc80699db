"""The web client's files as the gateway holds them: every file under gateway/static/ read into
memory once (the whole client is well under a megabyte), named by a hash of its content, and
compressed with brotli and gzip on first demand, in a worker thread, once per content.

Content hashes make two promises possible: a URL that names the current hash
(`/static/js/app.js?v=<digest>`) never changes meaning, so browsers may keep it for a year
without asking (`immutable`); and the service worker can check that what it stores is the
version its list names, even when a rolling deploy answers from pods of two versions.

The files are read again when one changes on disk (checked at most once a second), so a
developer's edit shows on the next reload without restarting the gateway.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import brotli

STATIC = Path(__file__).resolve().parent / "static"
DIGEST_CHARS = 12  # 48 bits of SHA-256: enough to tell versions of one file apart
RESCAN_EVERY_S = 1.0
# Below this, a compressed body saves less than its headers cost.
MIN_COMPRESS_BYTES = 256
ENCODINGS = ("br", "gzip")  # the server's order of preference

_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".md": "text/markdown; charset=utf-8",
}
_COMPRESSIBLE = ("text/", "application/json", "application/manifest+json", "image/svg+xml")


def media_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in _TYPES:
        return _TYPES[suffix]
    guessed = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return f"{guessed}; charset=utf-8" if guessed.startswith("text/") else guessed


def digest_of(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:DIGEST_CHARS]


@dataclass
class ClientFile:
    """One file's bytes, its hash, and its compressed forms once asked for."""

    body: bytes
    media_type: str
    digest: str = ""
    _encoded: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.digest = self.digest or digest_of(self.body)

    @property
    def compressible(self) -> bool:
        return len(self.body) >= MIN_COMPRESS_BYTES and self.media_type.startswith(_COMPRESSIBLE)

    def ready(self, coding: str) -> bool:
        """Whether `encoded(coding)` answers without compressing (no thread needed)."""
        return not self.compressible or coding in self._encoded

    def encoded(self, coding: str) -> bytes | None:
        """The body in `coding` ("br" or "gzip"), or None when that saves nothing worth it.
        Compresses at most once per coding, however many requests ask at the same time."""
        if not self.compressible:
            return None
        with self._lock:
            if coding not in self._encoded:
                packed = (
                    brotli.compress(self.body, quality=11)
                    if coding == "br"
                    else gzip.compress(self.body, compresslevel=9, mtime=0)
                )
                self._encoded[coding] = packed if len(packed) < 0.9 * len(self.body) else None
            return self._encoded[coding]


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` but hidden ones: relative POSIX path → (mtime_ns, size)."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.startswith("."):
                continue
            path = Path(folder) / name
            st = path.stat()
            found[path.relative_to(root).as_posix()] = (st.st_mtime_ns, st.st_size)
    return found


class ClientFiles:
    """The files under `root` by relative path ("js/app.js"); `generation` grows with each
    change seen, so what is derived from them (the page, the service worker's list) knows when
    to derive again."""

    def __init__(self, root: Path = STATIC, rescan_every_s: float = RESCAN_EVERY_S) -> None:
        self.root = root
        self.rescan_every_s = rescan_every_s
        self.generation = 0
        self._files: dict[str, ClientFile] = {}
        self._seen: dict[str, tuple[int, int]] = {}
        self._checked = 0.0
        self._rescan()

    def _rescan(self) -> None:
        listing = _listing(self.root) if self.root.is_dir() else {}
        if listing == self._seen:
            return
        files = {}
        for rel, stamp in listing.items():
            old = self._files.get(rel)
            if old is not None and self._seen.get(rel) == stamp:
                files[rel] = old
            else:
                files[rel] = ClientFile((self.root / rel).read_bytes(), media_type(rel))
        self._files, self._seen = files, listing
        self.generation += 1

    def current(self) -> dict[str, ClientFile]:
        now = time.monotonic()
        if now - self._checked >= self.rescan_every_s:
            self._checked = now
            self._rescan()
        return self._files

    def get(self, rel: str) -> ClientFile | None:
        return self.current().get(rel)

    def url(self, rel: str) -> str:
        """The URL naming this version of the file, safe to keep forever."""
        return f"/static/{rel}?v={self._files[rel].digest}"
