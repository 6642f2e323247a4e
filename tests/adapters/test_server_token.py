import stat

from charmemory.adapters.server_token import ServerTokenFile


def test_a_generated_token_is_kept_readable_by_its_owner_only(tmp_path) -> None:
    tokens = ServerTokenFile(tmp_path / "state" / "server-token")
    assert tokens.load() is None
    made = tokens.create()
    assert len(made) >= 32 and tokens.load() == made
    assert stat.S_IMODE((tmp_path / "state" / "server-token").stat().st_mode) == 0o600
    assert tokens.create() != made
