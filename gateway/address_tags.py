"""Address tags (issue 47): what the server keeps of where a profile's sessions come from, so that
two profiles of one person at one rated table rate nobody (actors/rating_facts.py) and one
person's reports of a name count once (gateway/reports.py) — never the address itself.

A tag is HMAC-SHA256 of the address under a secret key, cut to 64 bits: the same address gives
the same tag on every gateway that shares the key, and a store read without the key tells
nothing (an IPv4 address could be found from its tag by trying all four billion, but only with
the key). The key is `QUATRO_ADDRESS_KEY`, or else one derived from the Ray token, which every
gateway of a deployment already shares (a Ray without token authentication has its link secret
in Redis instead, and the key would sit beside the tags: set `QUATRO_ADDRESS_KEY` there);
rotating either changes every tag, so for a day the rule sees no one twice.

An IPv6 client is tagged by its /64 network: a household's devices share one, and each device
moves around in it (temporary addresses), as an IPv4 household shares its one address. An
address that is not one (a peer the server could not name) gets no tag.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress

TAG_HEX = 16  # 64 bits: no two addresses of a deployment's lifetime meet by chance
KEY_CONTEXT = b"quatro address tags"  # the derived key is used for nothing else


class AddressTags:
    """`key` None: tags are off, every session is taken to come from an address of its own."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key

    @classmethod
    def derived(cls, secret: str) -> AddressTags:
        """Tags keyed by a secret used for something else too (the Ray token): never with it."""
        return cls(hmac.new(secret.encode(), KEY_CONTEXT, hashlib.sha256).digest())

    @property
    def on(self) -> bool:
        return self.key is not None

    def tag(self, address: str) -> str | None:
        """The tag of a client's address (its /64 for IPv6); None when tags are off or the
        address is not one."""
        if self.key is None:
            return None
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return None
        if isinstance(ip, ipaddress.IPv6Address):
            mapped = ip.ipv4_mapped  # an IPv4 client on a dual-stack socket: its own address
            text = str(mapped or ipaddress.ip_network(f"{ip}/64", strict=False))
        else:
            text = str(ip)
        return hmac.new(self.key, text.encode(), hashlib.sha256).hexdigest()[:TAG_HEX]
