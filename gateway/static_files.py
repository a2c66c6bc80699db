"""Serving the web client's files (plain ASGI, mounted at /static): from memory, compressed when
the browser takes it (brotli, else gzip), with an ETag, and cached by the rule:

- a URL naming the file's current version (`?v=<digest>`): `public, max-age=31536000,
  immutable` — its meaning never changes;
- a URL naming another version (an old page asking after a deploy, or a pod of the other
  version in a rolling one): today's file, but `no-store`, so that nobody keeps it under a name
  that promises something else;
- any other URL, and the page: `no-cache` — kept, but asked again (a 304 when unchanged).

A request names a file only by looking it up among the files read at startup: no path from a
request ever reaches the file system.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qs

import anyio
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from gateway.client_files import ENCODINGS, ClientFile
from gateway.client_page import ELSEWHERE, WebClient

FOREVER = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
NOT_THIS = "no-store"


def chosen_encoding(accept_encoding: str) -> str | None:
    """The best of ENCODINGS that `Accept-Encoding` takes (q > 0), or None for identity."""
    weights: dict[str, float] = {}
    for part in accept_encoding.split(","):
        name, _, params = part.strip().partition(";")
        q = 1.0
        key, _, value = params.strip().partition("=")
        if key.strip() == "q":
            try:
                q = float(value)
            except ValueError:
                q = 0.0
        weights[name.strip().lower()] = q
    for coding in ENCODINGS:
        if weights.get(coding, weights.get("*", 0.0)) > 0:
            return coding
    return None


def _held_tag(if_none_match: str, digest: str) -> str | None:
    """The tag of `If-None-Match` that names this version, if any. Our ETags are the digest,
    with the coding after a dash for a compressed body: any of them means the client holds
    this version."""
    for tag in if_none_match.split(","):
        bare = tag.strip().removeprefix("W/").strip('"')
        if bare.split("-")[0] == digest:
            return tag.strip()
    return None


async def file_response(
    file: ClientFile,
    request_headers: Headers,
    cache_control: str,
    extra: Sequence[tuple[str, str]] = (),
    status: int = 200,
) -> Response:
    """The file, compressed as the browser takes it. With another `status` than 200 (the page
    answering an address where nothing is), never a 304 nor an ETag: those say "this is the
    resource", which a 404 is not."""
    headers = {"cache-control": cache_control, "vary": "accept-encoding", **dict(extra)}
    held = _held_tag(request_headers.get("if-none-match", ""), file.digest)
    if held is not None and status == 200:
        return Response(status_code=304, headers={**headers, "etag": held})
    body, etag = file.body, file.digest
    coding = chosen_encoding(request_headers.get("accept-encoding", ""))
    if coding is not None:
        # Compressing the first time takes a brotli pass at full quality: not on the event loop.
        encoded = (
            file.encoded(coding)
            if file.ready(coding)
            else await anyio.to_thread.run_sync(file.encoded, coding)
        )
        if encoded is not None:
            body, etag = encoded, f"{file.digest}-{coding}"
            headers["content-encoding"] = coding
    if status == 200:
        headers["etag"] = f'"{etag}"'
    return Response(body, status, headers=headers, media_type=file.media_type)


class StaticFiles:
    """The ASGI app at /static: GET and HEAD of the client's files, by exact path."""

    def __init__(self, client: WebClient) -> None:
        self.client = client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        path, root = scope["path"], scope.get("root_path", "")
        rel = (path[len(root) :] if path.startswith(root) else path).lstrip("/")
        response: Response
        if scope["method"] not in ("GET", "HEAD"):
            response = PlainTextResponse("Method Not Allowed", 405, {"allow": "GET, HEAD"})
        elif rel in ELSEWHERE or (found := self.client.static(rel)) is None:
            response = PlainTextResponse("Not Found", 404)
        else:
            asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("v")
            cache = REVALIDATE if not asked else FOREVER if found.digest in asked else NOT_THIS
            response = await file_response(found, Headers(scope=scope), cache)
        await response(scope, receive, send)
