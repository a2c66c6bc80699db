"""A player who moves through the web client by touch on a phone, or by keyboard alone on a
desktop: the two ways issue 46's rough edges are each tested (390×844 touch, 1280×800
keyboard)."""

from __future__ import annotations

from dataclasses import dataclass

from playwright.sync_api import Page

from tests.browser.players import Player
from tests.browser.test_keyboard import Keys


@dataclass
class Walker:
    """A player who moves through the client by touch, or by keyboard alone."""

    player: Player
    touch: bool
    keys: Keys

    @classmethod
    def of(cls, player: Player, touch: bool) -> Walker:
        return cls(player, touch, Keys(player.page))

    @property
    def page(self) -> Page:
        return self.player.page

    def go(self, target: str) -> None:
        """Follow the link or press the button `target` as this player does: a tap, or Tab
        until it has focus, then Enter."""
        if self.touch:
            self.page.locator(target).first.tap()
        else:
            self.keys.tab_to(target, most=80)
            self.keys.press("Enter")

    def type_into(self, field: str, text: str) -> None:
        if self.touch:
            self.page.locator(field).tap()
        else:
            self.keys.tab_to(field, most=80)
        self.page.keyboard.type(text)
