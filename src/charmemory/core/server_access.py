"""Who may call `charmemory serve`: the access-token rule.

On a loopback address only this machine can connect, so a token is optional.
Bound to anything else, the server is reachable from the network and refuses
to start without a token: one given (`--token`, `CHARMEMORY_TOKEN`), or one
generated earlier and stored in the workspace.
"""

from __future__ import annotations

import ipaddress

from charmemory.errors import ConfigError

TOKEN_ENV = "CHARMEMORY_TOKEN"
MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def access_token(host: str, given: str | None, stored: str | None) -> str | None:
    """The token every request must carry (None: none needed), or a ConfigError."""
    if given is not None:
        if len(given.strip()) < MIN_TOKEN_CHARS:
            raise ConfigError(f"the access token must be at least {MIN_TOKEN_CHARS} characters")
        return given.strip()
    if stored:
        return stored
    if not is_loopback(host):
        raise ConfigError(
            f"serving on {host} reaches beyond this machine and needs an access token: "
            f"pass --token TOKEN (or set {TOKEN_ENV}), or --new-token to generate one"
        )
    return None
