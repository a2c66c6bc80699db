"""The table page's mode machine (`modeReducer` in gateway/static/js/usetable.js), in the
browser's own JS: which page each named action leads to, from each mode."""

from __future__ import annotations

from typing import Any

MODES = ["connecting", "unseated", "seated", "watching", "missing"]


def test_each_action_leads_to_its_mode(browser: Any, static_url: str) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{static_url}/")
        got = page.evaluate(
            """async (modes) => {
              const { modeReducer } = await import("/static/js/usetable.js");
              const actions = {
                connecting: { type: "connecting" },
                seatedWelcome: { type: "welcomed", watching: false },
                watcherWelcome: { type: "welcomed", watching: true },
                noSeat: { type: "fatal", why: "no_seat" },
                badToken: { type: "fatal", why: "bad_token" },
                unknownTable: { type: "fatal", why: "unknown_table" },
                watchingOff: { type: "fatal", why: "watching_off" },
                replaced: { type: "fatal", why: "replaced" },
                freed: { type: "freed" },
                left: { type: "left" },
                watchStopped: { type: "watchStopped" },
                missing: { type: "missing" },
                unknown: { type: "no_such_action" },
              };
              const out = {};
              for (const [name, action] of Object.entries(actions)) {
                out[name] = Object.fromEntries(modes.map((m) => [m, modeReducer(m, action)]));
              }
              return out;
            }""",
            MODES,
        )
    finally:
        page.close()

    def every(mode: str) -> dict[str, str]:
        return {m: mode for m in MODES}

    assert got["connecting"] == every("connecting")
    assert got["seatedWelcome"] == every("seated")
    assert got["watcherWelcome"] == every("watching")
    for name in ("noSeat", "badToken", "watchingOff", "left", "watchStopped"):
        assert got[name] == every("unseated"), name
    assert got["unknownTable"] == every("missing")
    assert got["missing"] == every("missing")
    # A replaced socket is only a status; an unknown action changes nothing.
    assert got["replaced"] == {m: m for m in MODES}
    assert got["unknown"] == {m: m for m in MODES}
    # Only a seated player's seat can be freed under them.
    assert got["freed"] == {**{m: m for m in MODES}, "seated": "unseated"}
