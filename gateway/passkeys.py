"""Passkeys (issue 36): WebAuthn with the `webauthn` package, so that a player signs in on
another device and gets the same profile. No password, no e-mail.

- **Registering** (a session): options with a fresh challenge, kept in Redis for a few minutes
  under an id the browser sends back, used once (GETDEL); the browser's `credentials.create()`
  answer is verified (challenge, origin, relying party, signature) and its public key kept.
  Passkeys are discoverable (resident): signing in needs no user name, and no list of
  credential ids is ever sent, to anyone.
- **Signing in** (no session): a challenge, `credentials.get()`, then the passkey found by its
  credential id's SHA-256 and its signature verified against the key kept, its counter moved on;
  the answer is a new session of the passkey's player.
- What is kept: per passkey, its credential id's hash (the key's name), public key, counter, the
  player and an id of ours; per player, those ids with a label and a date. A credential id is
  never stored in clear, never logged, never answered.
- The label tells the owner's devices apart: the one the browser proposes (its platform and
  browser), numbered when another of the player's passkeys reads alike; its owner may rename it
  (the characters of a name, 1-40 of them: gateway/names.py). Only its owner ever sees it.

Every key is one slot: the challenge's, the passkey's, the player's; registering is two steps
(the passkey, then the player's list), each of which may run again.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from webauthn import (
    base64url_to_bytes,
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script
from engine.errors import ErrorCode
from gateway.errors import ApiError
from gateway.names import check_label

CHALLENGE_TTL_S = 300
TIMEOUT_MS = 120_000  # how long the browser's prompt stays
MOST_PASSKEYS = 10  # per player
RP_NAME = "Quatro"
UNLABELLED = "Passkey"  # a passkey registered without a label

# KEYS: the player's passkeys. ARGV: a passkey's id, its new label. Its line (JSON), or nil when
# the player has no such passkey. A script: a passkey removed meanwhile (from another tab) must
# not come back as a line without its key.
RENAME = Script(
    "passkeys.rename",
    """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local line = cjson.decode(raw)
line['label'] = ARGV[2]
local out = cjson.encode(line)
redis.call('HSET', KEYS[1], ARGV[1], out)
return out
""",
)


@dataclass(frozen=True, slots=True)
class Site:
    """Who the browser is talking to: the relying party's id (a domain) and the page's origin."""

    rp_id: str
    origin: str


def site_of(origin: str | None, host: str | None, scheme: str, rp_id: str) -> Site:
    """The site of a request: its `Origin` must be the host it asked (a page of this site; the
    browser sets both), and the relying party is that host's name unless configured. An IP
    address is refused, told as such: WebAuthn takes a domain (or `localhost`) as the relying
    party, and a browser would refuse the ceremony only after its prompt."""
    if not host:
        raise ApiError(ErrorCode.BAD_PASSKEY, "no Host")
    own = f"{scheme}://{host}".lower()
    if origin is None or origin.lower().rstrip("/") != own:
        raise ApiError(ErrorCode.BAD_PASSKEY, "passkeys are used from this site's own pages")
    site = rp_id or urlsplit(own).hostname or ""
    if _ip_address(site):
        raise ApiError(
            ErrorCode.BAD_PASSKEY,
            "a passkey's site is a domain name: open this site by its name, not an IP address",
        )
    return Site(site, own)


def _ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def credential_hash(credential_id: bytes) -> str:
    return hashlib.sha256(credential_id).hexdigest()


class Passkeys:
    def __init__(self, redis: AsyncRedis, rp_id: str) -> None:
        self.redis = redis
        self.rp_id = rp_id  # QUATRO_PASSKEY_RP_ID, "" for the host asked

    async def _challenge(self, kind: str, site: Site, challenge: bytes, player: str = "") -> str:
        challenge_id = secrets.token_urlsafe(24)
        value = {
            "kind": kind,
            "challenge": bytes_to_base64url(challenge),
            "rp_id": site.rp_id,
            "origin": site.origin,
            "player": player,
        }
        await self.redis.set(keys.challenge(challenge_id), json.dumps(value), ex=CHALLENGE_TTL_S)
        return challenge_id

    async def _used(self, challenge_id: str, kind: str, site: Site) -> dict[str, Any]:
        """The challenge, once: a second use, an expired one, or one from another site or of
        another kind is refused."""
        raw = await self.redis.getdel(keys.challenge(challenge_id))
        if raw is None:
            raise ApiError(ErrorCode.BAD_PASSKEY, "this challenge expired or was used")
        data: dict[str, Any] = json.loads(raw)
        if data["kind"] != kind or (data["rp_id"], data["origin"]) != (site.rp_id, site.origin):
            raise ApiError(ErrorCode.BAD_PASSKEY, "this challenge is not for this")
        return data

    # -- registering ----------------------------------------------------------------------------
    async def register_options(self, site: Site, player_id: str, name: str) -> dict[str, Any]:
        options = generate_registration_options(
            rp_id=site.rp_id,
            rp_name=RP_NAME,
            user_name=name,
            user_display_name=name,
            user_id=player_id.encode(),
            timeout=TIMEOUT_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                user_verification=UserVerificationRequirement.PREFERRED,
            ),
        )
        challenge_id = await self._challenge("register", site, options.challenge, player_id)
        return {"challenge_id": challenge_id, "options": json.loads(options_to_json(options))}

    async def register(
        self, site: Site, player_id: str, challenge_id: str, credential: dict[str, Any], label: str
    ) -> dict[str, Any]:
        data = await self._used(challenge_id, "register", site)
        if data["player"] != player_id:
            raise ApiError(ErrorCode.BAD_PASSKEY, "this challenge is another session's")
        if await self.redis.hlen(keys.passkeys(player_id)) >= MOST_PASSKEYS:
            raise ApiError(ErrorCode.NOT_ALLOWED, f"at most {MOST_PASSKEYS} passkeys: remove one")
        try:
            verified = verify_registration_response(
                credential=credential,
                expected_challenge=base64url_to_bytes(data["challenge"]),
                expected_rp_id=site.rp_id,
                expected_origin=site.origin,
            )
        except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
            raise ApiError(ErrorCode.BAD_PASSKEY, "the passkey could not be verified") from exc
        cred = credential_hash(verified.credential_id)
        key_id = f"k-{secrets.token_hex(8)}"
        record: dict[Any, Any] = {
            "player": player_id,
            "key": key_id,
            "public_key": bytes_to_base64url(verified.credential_public_key),
            "sign_count": str(verified.sign_count),
        }
        # The passkey first (a credential already registered keeps its first owner), then the
        # player's list: a retry finds both as they should be.
        if not await self.redis.hsetnx(keys.passkey(cred), "player", player_id):
            owner = await self.redis.hget(keys.passkey(cred), "player")
            if owner != player_id:
                raise ApiError(ErrorCode.BAD_PASSKEY, "this passkey belongs to another profile")
            key_id = str(await self.redis.hget(keys.passkey(cred), "key") or key_id)
            record["key"] = key_id
        await self.redis.hset(keys.passkey(cred), mapping=record)
        taken = {line["label"] for line in await self.mine(player_id) if line["id"] != key_id}
        line = {
            "credential": cred,
            "label": distinct(label or UNLABELLED, taken),
            "created": _now_ms(),
        }
        await self.redis.hset(keys.passkeys(player_id), key_id, json.dumps(line))
        return {"id": key_id, "label": line["label"], "created": line["created"]}

    async def mine(self, player_id: str) -> list[dict[str, Any]]:
        raw = await self.redis.hgetall(keys.passkeys(player_id))
        lines = [
            {"id": str(k), "label": v["label"], "created": v["created"]}
            for k, v in ((k, json.loads(v)) for k, v in raw.items())
        ]
        return sorted(lines, key=lambda line: line["created"])

    async def rename(self, player_id: str, key_id: str, label: str) -> dict[str, Any]:
        """The passkey of this player's, relabelled (the label as checked at the edge). 404
        `unknown_passkey` for an id that is not one of theirs: another's passkey is named by
        nothing a player can read, and answers as one that never was."""
        raw = await RENAME.run(self.redis, [keys.passkeys(player_id)], [key_id, label])
        if raw is None:
            raise ApiError(ErrorCode.UNKNOWN_PASSKEY, "no such passkey of yours")
        line = json.loads(raw)
        return {"id": key_id, "label": line["label"], "created": int(line["created"])}

    async def remove(self, player_id: str, key_id: str) -> None:
        raw = await self.redis.hget(keys.passkeys(player_id), key_id)
        if raw is None:
            raise ApiError(ErrorCode.UNKNOWN_PASSKEY, "no such passkey of yours")
        await self.redis.delete(keys.passkey(json.loads(raw)["credential"]))
        await self.redis.hdel(keys.passkeys(player_id), key_id)

    # -- signing in ----------------------------------------------------------------------------
    async def sign_in_options(self, site: Site) -> dict[str, Any]:
        options = generate_authentication_options(
            rp_id=site.rp_id,
            timeout=TIMEOUT_MS,
            user_verification=UserVerificationRequirement.PREFERRED,
        )
        challenge_id = await self._challenge("sign_in", site, options.challenge)
        return {"challenge_id": challenge_id, "options": json.loads(options_to_json(options))}

    async def sign_in(self, site: Site, challenge_id: str, credential: dict[str, Any]) -> str:
        """The player whose passkey signed the challenge."""
        data = await self._used(challenge_id, "sign_in", site)
        try:
            raw_id = base64url_to_bytes(str(credential["rawId"]))
        except (KeyError, ValueError, TypeError) as exc:
            raise ApiError(ErrorCode.BAD_PASSKEY, "no credential id") from exc
        key = keys.passkey(credential_hash(raw_id))
        stored = await self.redis.hgetall(key)
        if not stored or "public_key" not in stored:
            raise ApiError(ErrorCode.BAD_PASSKEY, "no profile has this passkey")
        try:
            verified = verify_authentication_response(
                credential=credential,
                expected_challenge=base64url_to_bytes(data["challenge"]),
                expected_rp_id=site.rp_id,
                expected_origin=site.origin,
                credential_public_key=base64url_to_bytes(str(stored["public_key"])),
                credential_current_sign_count=int(stored.get("sign_count", 0)),
            )
        except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
            raise ApiError(ErrorCode.BAD_PASSKEY, "the passkey could not be verified") from exc
        await self.redis.hset(key, "sign_count", str(verified.new_sign_count))
        return str(stored["player"])


def distinct(label: str, taken: set[str]) -> str:
    """`label`, or numbered so that it reads like none of `taken` (the player's other labels):
    two phones of one make, or a passkey added twice from one browser, are told apart."""
    if label not in taken:
        return label
    n = 2
    while True:
        numbered = f"{label} ({n})"
        try:
            numbered = check_label(numbered)
        except ValueError:  # past the length a label may have: the label made short
            numbered = f"{UNLABELLED} ({n})"
        if numbered not in taken:
            return numbered
        n += 1


def _now_ms() -> int:
    return int(time.time() * 1000)
