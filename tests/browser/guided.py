"""A learner playing the guided round (issue 46) through the page, as a newcomer does: read the
coach's instruction, do what it points at, by touch or by keyboard alone. Shared by
tests/browser/test_tutorial.py and the screenshots (`screenshots.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.players import wait_swap_ready

# Steps where the coach asks to watch: the bots play their part, the learner waits.
WATCHING = ("wait", "watch_partner", "watch_others", "seen_once")
# A tutorial's clock for the tests (the server takes it with test hooks only): its bots,
# cooldowns and emissions ten times as fast, nothing else changed.
FAST = {"seed": 46, "time_scale": 0.1}
PLACEHOLDER = re.compile(r"\{\w+\}")
# The steps a learner who follows the coach meets, in order.
SCRIPT = [
    "sign", "ready", "swap", "swap_more", "floor", "show", "wait", "done1",
    "sign_again", "ready", "watch_partner", "call_quatro", "done2",
    "ready_partner", "watch_others", "seen_once", "call_contre", "finished",
]  # fmt: skip


def fixed_part(text: str) -> str:
    """The longest stretch of a catalog sentence between its placeholders: what the page shows
    word for word, whatever the names and pictures put in."""
    return max((part.strip() for part in PLACEHOLDER.split(text)), key=len)


# Every instruction the page shows, in order, as the page itself sees it change: one that lasts
# a moment (an opponent's first emission, seconds before the next) is counted however busy the
# machine running the test is.
RECORD_JS = """(() => {
  const seen = (window.__coachSteps = []);
  const note = () => {
    const step = document.querySelector(".coach")?.dataset.step;
    if (step && seen[seen.length - 1] !== step) seen.push(step);
  };
  new MutationObserver(note).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-step"],
  });
})();"""
# What a step looks like at one instant: which step, its sentence, whether its marks are in
# view (on a phone nothing the coach points at may be off the screen).
LOOK_JS = """() => {
  const c = document.querySelector(".coach");
  const marks = [...document.querySelectorAll("[data-coach]")].map((el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  });
  return { step: c?.dataset.step, say: c?.querySelector(".coach-say")?.innerText, marks };
}"""


def record(page: Page) -> None:
    """From now on the page notes every instruction it shows (`shown`)."""
    page.context.add_init_script(RECORD_JS)


def shown(page: Page) -> list[str]:
    steps: list[str] = page.evaluate("window.__coachSteps ?? []")
    return steps


def start(page: Page, base: str, name: str) -> None:
    """From the home page's offer, by touch."""
    page.fill("#player-name", name)
    page.locator("#tutorial-start").tap()
    page.wait_for_url("**/t/*")
    expect(page.locator(".coach")).to_be_visible()


def step_of(page: Page) -> str:
    return page.locator(".coach").get_attribute("data-step") or ""


def next_step(page: Page, after: str, timeout: float = 20_000) -> str:
    """The coach's next instruction once it differs from `after` (bots at a test's pace)."""
    page.wait_for_function(
        """after => {
            const c = document.querySelector(".coach");
            return c && c.dataset.step !== after;
        }""",
        arg=after,
        timeout=timeout,
    )
    return step_of(page)


def tab_to(page: Page, selector: str, most: int = 80) -> None:
    """Tab until the focus is on `selector`, as a keyboard user does: fails when it never is."""
    for _ in range(most):
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{selector} is not reachable by Tab")


class Learner:
    """Does what the coach asks: taps on a phone (`keys=False`) or keys on a desktop."""

    def __init__(self, page: Page, keys: bool = False, sign: str = "🍍") -> None:
        self.page = page
        self.keys = keys
        self.sign = sign

    def press(self, selector: str) -> None:
        if self.keys:
            tab_to(self.page, selector)
            self.page.keyboard.press("Enter")
        else:
            self.page.locator(selector).first.tap()

    def swap(self) -> None:
        page = self.page
        wait_swap_ready(page)
        card = page.locator(".hand-card[data-coach]")
        slot = page.locator(".slot[data-coach]")
        if self.keys:
            # The shortcuts: 1-4 pick a card of the hand in reading order, then a centre slot.
            cards = page.locator(".hand-card").evaluate_all("els => els.map(e => e.dataset.cardId)")
            page.keyboard.press(str(cards.index(card.get_attribute("data-card-id")) + 1))
            page.keyboard.press(str(int(slot.get_attribute("data-slot") or 0) + 1))
        else:
            card.tap()
            slot.tap()

    def do(self, step: str) -> None:
        page = self.page
        if step in ("sign", "sign_again"):
            if self.keys:
                tab_to(page, ".signing .emoji")
                # The grid's arrows move between its emojis (js/panels.js): to ours.
                for _ in range(24):
                    if page.evaluate("e => document.activeElement.dataset.emoji === e", self.sign):
                        break
                    page.keyboard.press("ArrowRight")
                page.keyboard.press("Enter")
            else:
                page.locator(f".signing .emoji[data-emoji='{self.sign}']").tap()
        elif step in ("ready", "ready_partner"):
            self.press("#ready-btn")
        elif step in ("swap", "swap_more"):
            self.swap()
        elif step == "floor":
            self.press("#floor-toggle")
        elif step == "show":
            self.press("#emit-toggle")
            self.press("#emit-picker [data-coach]")
        elif step == "call_quatro":
            self.press("#call-quatro")
        elif step == "call_contre":
            self.press("#call-contre")
        elif step in ("done1", "done2", "missed"):
            self.press("#start-now")

    def play(self, each: Callable[[str], Any] = lambda step: None) -> list[str]:
        """Follow the coach to the end: `each(step)` looks at every instruction first. The steps
        met, in order."""
        steps = [step_of(self.page)]
        while steps[-1] != "finished":
            each(steps[-1])
            self.do(steps[-1])
            steps.append(next_step(self.page, steps[-1]))
        each("finished")
        return steps
