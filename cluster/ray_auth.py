"""Ray's token authentication for the stack: a fresh token per embedded run, and the mode a
driver joining someone else's cluster uses.

Reaching any Ray port means running arbitrary code in the cluster, so the embedded head always
runs with `RAY_AUTH_MODE=token`. Its token is never logged nor put on a command line: it lives in a
0600 file of the run's 0700 directory, and every process we start gets `RAY_AUTH_TOKEN_PATH`.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not at run time: table actors import this, and pydantic is ~10 MiB each
    from cluster.settings import Settings

log = logging.getLogger("quatro.cluster")

TOKEN_FILE = "ray_auth_token"
# Where Ray itself looks when neither RAY_AUTH_TOKEN nor RAY_AUTH_TOKEN_PATH is set.
RAY_DEFAULT_TOKEN = Path.home() / ".ray" / "auth_token"


def write_token(private_dir: Path) -> Path:
    """A new token (256 random bits, as Ray's own generator makes) in `private_dir`, which
    becomes 0700; the file is created 0600 and never overwritten."""
    private_dir.chmod(0o700)
    path = private_dir / TOKEN_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32))
    return path


def joining_auth_mode(settings: Settings) -> str:
    """RAY_AUTH_MODE for a driver of an existing cluster: as set; else `token` when a token is
    at hand (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or Ray's default file). `disabled` is still
    possible, for clusters older than token auth, and said loudly."""
    mode = (settings.ray_auth_mode or "").strip().lower()
    if not mode:
        has_token = (
            settings.ray_auth_token is not None
            or bool(settings.ray_auth_token_path)
            or RAY_DEFAULT_TOKEN.exists()
        )
        mode = "token" if has_token else "disabled"
    if mode == "disabled":
        log.warning(
            "!! joining Ray at %s WITHOUT authentication (RAY_AUTH_MODE=%s): anyone who reaches "
            "that cluster can run code in it and read every hand. Set RAY_AUTH_TOKEN or "
            "RAY_AUTH_TOKEN_PATH (and RAY_AUTH_MODE=token) !!",
            settings.ray_address,
            settings.ray_auth_mode or "unset, no token found",
        )
    return mode
