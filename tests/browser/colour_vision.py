"""Colour arithmetic for the palette tests: sRGB to CIELAB (D65), colour-vision-deficiency
simulation, and the CIEDE2000 colour difference.

Simulation uses the matrices of Machado, Oliveira & Fernandes (2009), "A Physiologically-based
Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6), table for severity 1.0
(dichromacy), applied to linear-light sRGB and clipped to the gamut. CIEDE2000 follows Sharma,
Wu & Dalal (2005), "The CIEDE2000 Color-Difference Formula: Implementation Notes…", whose test
pairs `test_team_palette.py` checks this implementation against.
"""

from __future__ import annotations

import math
import re

import numpy as np
import numpy.typing as npt

Vec = npt.NDArray[np.float64]

MACHADO_2009 = {
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
}

# sRGB (D65) linear light to CIE XYZ, and the D65 white point (Y = 1).
RGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
D65 = np.array([0.95047, 1.0, 1.08883])

HEX = re.compile(r"^#([0-9a-fA-F]{6})$")


def parse_hex(text: str) -> Vec:
    """`#rrggbb` as sRGB in [0, 1]; anything else is refused with ValueError."""
    m = HEX.match(text.strip())
    if not m:
        raise ValueError(f"not a #rrggbb colour: {text!r}")
    h = m.group(1)
    return np.array([int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)], dtype=np.float64)


def to_linear(srgb: Vec) -> Vec:
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def to_encoded(linear: Vec) -> Vec:
    linear = np.clip(linear, 0.0, 1.0)
    return np.where(linear <= 0.0031308, linear * 12.92, 1.055 * linear ** (1 / 2.4) - 0.055)


def simulate(srgb: Vec, deficiency: str | None) -> Vec:
    """What a dichromat of that kind sees, as sRGB; `None` is normal vision."""
    if deficiency is None:
        return srgb
    return to_encoded(MACHADO_2009[deficiency] @ to_linear(srgb))


def relative_luminance(srgb: Vec) -> float:
    return float(RGB_TO_XYZ[1] @ to_linear(srgb))


def contrast_ratio(a: Vec, b: Vec) -> float:
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def to_lab(srgb: Vec) -> Vec:
    xyz = (RGB_TO_XYZ @ to_linear(np.clip(srgb, 0.0, 1.0))) / D65
    eps, kappa = 216 / 24389, 24389 / 27
    f = np.where(xyz > eps, np.cbrt(xyz), (kappa * xyz + 16) / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def ciede2000(lab1: Vec, lab2: Vec) -> float:
    """ΔE00 between two CIELAB colours (kL = kC = kH = 1)."""
    l1, a1, b1 = (float(v) for v in lab1)
    l2, a2, b2 = (float(v) for v in lab2)
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0

    dl = l2 - l1
    dc = c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    elif abs(h2p - h1p) <= 180:
        dh = h2p - h1p
    elif h2p - h1p > 180:
        dh = h2p - h1p - 360
    else:
        dh = h2p - h1p + 360
    d_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))

    l_bar = (l1 + l2) / 2
    cp_bar = (c1p + c2p) / 2
    if c1p * c2p == 0:
        hp_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hp_bar = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        hp_bar = (h1p + h2p + 360) / 2
    else:
        hp_bar = (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(hp_bar - 30))
        + 0.24 * math.cos(math.radians(2 * hp_bar))
        + 0.32 * math.cos(math.radians(3 * hp_bar + 6))
        - 0.20 * math.cos(math.radians(4 * hp_bar - 63))
    )
    d_theta = 30 * math.exp(-(((hp_bar - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_bar**7 / (cp_bar**7 + 25**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    r_t = -math.sin(math.radians(2 * d_theta)) * r_c
    return math.sqrt(
        (dl / s_l) ** 2 + (dc / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (dc / s_c) * (d_h / s_h)
    )


def delta_e(hex1: str, hex2: str, deficiency: str | None = None) -> float:
    """ΔE00 between two `#rrggbb` colours as seen with normal vision or a dichromacy."""
    sim1 = simulate(parse_hex(hex1), deficiency)
    sim2 = simulate(parse_hex(hex2), deficiency)
    return ciede2000(to_lab(sim1), to_lab(sim2))
