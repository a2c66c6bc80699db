"""Draw the web client's icons from their one source, gateway/static/icons/icon.svg, with
Debian's chromium (the picture is exactly what a browser shows) and Pillow (favicon.ico):

    .venv/bin/python -m tests.browser.icons

- `icon-192.png`, `icon-512.png`: the SVG as it is (rounded corners, transparent outside);
- `maskable-192.png`, `maskable-512.png`: full-bleed felt, the fan shrunk into the central
  circle that every launcher's mask keeps (radius 40% of the side);
- `apple-touch-icon.png` (180): full-bleed too, since iOS rounds the corners itself;
- `favicon.ico`: 16, 32 and 48 pixels, each drawn at its own size.

The manifest (gateway/static/manifest.webmanifest) names them; tests/browser/test_app_shell.py
checks that each loads at the size it claims.
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page, sync_playwright

from tests.browser.conftest import CHROMIUM, CHROMIUM_FLAGS, STATIC

ICONS = STATIC / "icons"
SOURCE = ICONS / "icon.svg"
# The fan's scale in the full-bleed variants: inside the maskable safe circle, and a little
# larger where only the corners are cut.
MASKABLE_SCALE = 0.8
APPLE_SCALE = 0.86


def draw(page: Page, size: int, full_bleed: float | None = None) -> bytes:
    page.set_viewport_size({"width": size, "height": size})
    page.set_content(
        '<body style="margin:0">'
        + SOURCE.read_text().replace("<svg ", f'<svg width="{size}" height="{size}" ', 1)
        + "</body>"
    )
    if full_bleed is not None:
        page.evaluate(
            """(scale) => {
                document.getElementById("felt-square").setAttribute("rx", "0");
                const fan = document.getElementById("fan");
                const t = `translate(256 256) scale(${scale}) translate(-256 -256) `;
                fan.setAttribute("transform", t + fan.getAttribute("transform"));
            }""",
            full_bleed,
        )
    return page.screenshot(omit_background=True, type="png")


def save_png(data: bytes, path: Path) -> None:
    Image.open(io.BytesIO(data)).save(path, optimize=True)
    print("wrote", path.relative_to(STATIC.parent.parent))


def main() -> int:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page()
        for size in (192, 512):
            save_png(draw(page, size), ICONS / f"icon-{size}.png")
            save_png(draw(page, size, MASKABLE_SCALE), ICONS / f"maskable-{size}.png")
        save_png(draw(page, 180, APPLE_SCALE), ICONS / "apple-touch-icon.png")
        small = [Image.open(io.BytesIO(draw(page, s))) for s in (48, 32, 16)]
        browser.close()
    ico = ICONS / "favicon.ico"
    small[0].save(ico, sizes=[im.size for im in small], append_images=small[1:])
    print("wrote", ico.relative_to(STATIC.parent.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
