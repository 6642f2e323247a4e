import pytest

from charmemory.core.server_access import access_token, is_loopback
from charmemory.errors import ConfigError

TOKEN = "t" * 32


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.1", "localhost", "::1", "[::1]"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)
    assert access_token(host, None, None) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "::", "example.org"])
def test_any_other_address_needs_a_token(host: str) -> None:
    with pytest.raises(ConfigError, match="needs an access token"):
        access_token(host, None, None)
    assert access_token(host, TOKEN, None) == TOKEN
    assert access_token(host, None, TOKEN) == TOKEN


def test_a_given_token_wins_and_must_not_be_trivial() -> None:
    assert access_token("127.0.0.1", TOKEN, "s" * 32) == TOKEN
    with pytest.raises(ConfigError, match="at least 16"):
        access_token("0.0.0.0", "short", None)
