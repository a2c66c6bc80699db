"""Passkeys' rules that need no Redis (issue 46, point 4). Where one can be used: the site of a
passkey call is the host the page asked, by its name; an IP address is refused before any
ceremony, with the reason (on 127.0.0.1 a browser refuses WebAuthn only after its prompt, which
the client told as "No passkey was used."). What a label may hold: a name's characters, 1-40 of
them; and labels that read alike are numbered apart (gateway/passkeys.py, gateway/names.py)."""

from __future__ import annotations

import pytest

from gateway.errors import ApiError
from gateway.names import NAME_PATTERN
from gateway.passkeys import Site, distinct, site_of
from gateway.profile_models import PasskeyRename


@pytest.mark.parametrize(
    ("host", "origin", "rp_id", "site"),
    [
        ("localhost:8000", "http://localhost:8000", "", Site("localhost", "http://localhost:8000")),
        (
            "quatro.example",
            "https://quatro.example",
            "",
            Site("quatro.example", "https://quatro.example"),
        ),
        (
            "play.quatro.example",
            "https://play.quatro.example",
            "quatro.example",
            Site("quatro.example", "https://play.quatro.example"),
        ),
    ],
)
def test_a_site_by_its_name_is_its_relying_party(
    host: str, origin: str, rp_id: str, site: Site
) -> None:
    scheme = origin.split(":")[0]
    assert site_of(origin, host, scheme, rp_id) == site


@pytest.mark.parametrize(
    ("host", "rp_id"),
    [
        ("127.0.0.1:8000", ""),
        ("10.1.2.3", ""),
        ("[::1]:8000", ""),
        ("localhost:8000", "127.0.0.1"),
    ],
)
def test_an_ip_address_is_refused_saying_why(host: str, rp_id: str) -> None:
    with pytest.raises(ApiError) as refused:
        site_of(f"http://{host}", host, "http", rp_id)
    assert (refused.value.code, refused.value.status) == ("bad_passkey", 401)
    assert "IP address" in refused.value.message


def test_a_page_of_another_site_is_refused() -> None:
    with pytest.raises(ApiError, match="own pages"):
        site_of("https://evil.example", "quatro.example", "https", "")
    with pytest.raises(ApiError, match="own pages"):
        site_of(None, "quatro.example", "https", "")


def test_a_label_holds_what_a_name_may_and_up_to_40_characters() -> None:
    for label in (
        "Chrome · Linux",
        "  Mon   téléphone ",
        "Bot 3",
        "هاتفي",
        "Laptop 👩‍💻",
        "x" * 40,
    ):
        assert PasskeyRename(label=label).label == " ".join(label.split())
    for bad in ("", "   ", "x" * 41, "a\u202eb", "tab\x00", "\u200b", "a\u0301\u0301\u0301"):
        with pytest.raises(ValueError, match=r"label|marks|joiner|at least|at most"):
            PasskeyRename(label=bad)
    schema = PasskeyRename.model_json_schema()["properties"]["label"]
    assert (schema["minLength"], schema["maxLength"]) == (1, 100)
    assert (schema["pattern"], schema["format"]) == (NAME_PATTERN, "quatro-label")


def test_labels_that_read_alike_are_numbered_apart() -> None:
    assert distinct("Chrome · Linux", set()) == "Chrome · Linux"
    assert distinct("Chrome · Linux", {"Chrome · Linux"}) == "Chrome · Linux (2)"
    taken = {"Chrome · Linux", "Chrome · Linux (2)", "Safari · iPhone"}
    assert distinct("Chrome · Linux", taken) == "Chrome · Linux (3)"
    # Too long to take a number: a plain label, numbered.
    assert distinct("x" * 40, {"x" * 40}) == "Passkey (2)"
