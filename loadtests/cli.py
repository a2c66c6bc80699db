"""What the kit's commands share on their command line: how the players play, where the results
go, which gateway is the target, Ray's quiet settings, and a clean stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from loadtests.runner import Play


def command(module: str, doc: str | None) -> argparse.ArgumentParser:
    """The parser of `python -m loadtests.<module>` (or of a dotted module of its own, such as
    `lab.ray_floor`), its help the module's docstring as written."""
    return argparse.ArgumentParser(
        prog=f"python -m {module if '.' in module else 'loadtests.' + module}",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_play(
    p: argparse.ArgumentParser,
    *,
    drop_rate: bool = True,
    time_scale: bool = True,
    match_rounds: bool = False,
) -> None:
    """The Locust players' own options (loadtests/users/options.py), as `Play` passes them."""
    p.add_argument("--players", type=int, default=6, choices=(4, 6, 8), help="seats per table")
    p.add_argument("--pace", type=float, default=1.0, help="human pace factor (1 = human)")
    if match_rounds:
        p.add_argument("--match-rounds", type=int, default=0, help="rounds per table; 0 = matches")
    if drop_rate:
        p.add_argument("--drop-rate", type=float, default=0.0, help="drops per user per minute")
    if time_scale:
        p.add_argument("--time-scale", type=float, default=1.0, help="server test hook time_scale")


def play(a: argparse.Namespace) -> Play:
    return Play(
        players=a.players,
        pace=a.pace,
        match_rounds=getattr(a, "match_rounds", 0),
        drop_rate=getattr(a, "drop_rate", 0.0),
        time_scale=getattr(a, "time_scale", 1.0),
    )


def add_out(p: argparse.ArgumentParser, kind: str) -> None:
    p.add_argument("--out", type=Path, default=None, help=f"default: results/{kind}-<time>/")


def out_dir(given: Path | None, kind: str) -> Path:
    """The results folder, made: `--out`, or results/<kind>-<local time>/."""
    out = given or Path("results") / time.strftime(f"{kind}-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    return out


def add_url(
    p: argparse.ArgumentParser, default: str | None = None, what: str = "a running gateway"
) -> None:
    p.add_argument("--url", default=default, help=what)


def add_quiet_ray(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quiet-ray", default="1", choices=("0", "1"), help="embedded: Ray's quiet settings"
    )


def default_url() -> str:
    """`make run`'s gateway, or QUATRO_URL."""
    return os.environ.get("QUATRO_URL", "http://127.0.0.1:8000")


def main(run: Callable[[], int]) -> NoReturn:
    """Run a command: its status, or 130 after Ctrl-C (its `finally` blocks stopped what it
    started)."""
    try:
        sys.exit(run())
    except KeyboardInterrupt:
        sys.exit(130)
