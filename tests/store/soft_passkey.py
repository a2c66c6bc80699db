"""A passkey authenticator in software, for tests that need a passkey without a browser: a P-256
key pair and a credential id, answering registration (attestation "none") and sign-in the way a
browser's `credentials.create()` and `credentials.get()` do, so that `webauthn` verifies them as
it verifies a real device's. The browser tests use Chromium's virtual authenticator instead."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import bytes_to_base64url

UP, UV, AT = 0x01, 0x04, 0x40  # authenticator data flags: user present, verified, key attached


class SoftPasskey:
    def __init__(self, rp_id: str, origin: str) -> None:
        self.rp_id = rp_id
        self.origin = origin
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(16)
        self.count = 0

    def _client_data(self, kind: str, options: dict[str, Any]) -> bytes:
        data = {"type": kind, "challenge": options["challenge"], "origin": self.origin}
        return json.dumps({**data, "crossOrigin": False}).encode()

    def _authenticator_data(self, attested: bool) -> bytes:
        self.count += 1
        flags = UP | UV | (AT if attested else 0)
        data = hashlib.sha256(self.rp_id.encode()).digest() + bytes([flags])
        data += self.count.to_bytes(4, "big")
        if attested:
            point = self.key.public_key().public_numbers()
            x, y = point.x.to_bytes(32, "big"), point.y.to_bytes(32, "big")
            cose = {1: 2, 3: -7, -1: 1, -2: x, -3: y}  # EC2, ES256, P-256
            data += bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id
            data += cbor2.dumps(cose)
        return data

    def _credential(self, response: dict[str, bytes]) -> dict[str, Any]:
        cid = bytes_to_base64url(self.credential_id)
        answer = {k: bytes_to_base64url(v) for k, v in response.items()}
        return {"id": cid, "rawId": cid, "type": "public-key", "response": answer}

    def create(self, options: dict[str, Any]) -> dict[str, Any]:
        """What `credentials.create()` answers to registration options."""
        attestation = {"fmt": "none", "attStmt": {}, "authData": self._authenticator_data(True)}
        return self._credential(
            {
                "clientDataJSON": self._client_data("webauthn.create", options),
                "attestationObject": cbor2.dumps(attestation),
            }
        )

    def get(self, options: dict[str, Any]) -> dict[str, Any]:
        """What `credentials.get()` answers to sign-in options."""
        client_data = self._client_data("webauthn.get", options)
        signed = self._authenticator_data(False)
        signature = self.key.sign(
            signed + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256())
        )
        return self._credential(
            {"clientDataJSON": client_data, "authenticatorData": signed, "signature": signature}
        )
