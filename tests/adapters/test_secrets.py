import stat
from pathlib import Path

import pytest

from charmemory.adapters.atomic_file import FileLocks
from charmemory.adapters.migrations import MIGRATIONS
from charmemory.adapters.retrieval_log import SqliteRetrievalLog
from charmemory.adapters.secrets import API_KEY_ENV, ApiKeys, KeyLookup, Redactor, SecretsFile
from charmemory.adapters.sqlite_db import connect
from charmemory.errors import ConfigError

KEY = "sk-or-v1-0123456789abcdef"


@pytest.fixture
def secrets(tmp_path: Path) -> SecretsFile:
    return SecretsFile(tmp_path / "state" / "secrets.json", FileLocks(tmp_path / "locks"))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_keys_are_stored_privately_and_atomically(secrets: SecretsFile) -> None:
    secrets.set("openrouter", KEY)
    secrets.set("groq", "gsk_other")

    assert mode(secrets.path) == 0o600
    assert secrets.get("openrouter") == KEY and secrets.providers() == ["groq", "openrouter"]
    assert [p.name for p in secrets.path.parent.iterdir()] == ["secrets.json"]  # no temporaries


def test_the_temporary_file_is_never_readable_by_others(
    secrets: SecretsFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    import charmemory.adapters.atomic_file as atomic_file

    seen: list[int] = []
    original = atomic_file.os.fsync

    def note_mode(fd: int) -> None:
        seen.append(stat.S_IMODE(atomic_file.os.fstat(fd).st_mode))
        original(fd)

    monkeypatch.setattr(atomic_file.os, "fsync", note_mode)
    secrets.set("openai", KEY)
    assert seen and seen[0] & 0o077 == 0


def test_a_file_found_readable_by_others_is_tightened(secrets: SecretsFile) -> None:
    secrets.set("openai", KEY)
    secrets.path.chmod(0o644)
    assert secrets.get("openai") == KEY
    assert mode(secrets.path) == 0o600


def test_deleting_a_key(secrets: SecretsFile) -> None:
    secrets.set("openai", KEY)
    assert secrets.delete("openai") and not secrets.delete("openai")
    assert secrets.get("openai") is None


def test_a_damaged_file_is_reported_without_quoting_it(secrets: SecretsFile) -> None:
    secrets.path.parent.mkdir(parents=True)
    secrets.path.write_text('{"api_keys": {"openai": "' + KEY)
    with pytest.raises(ConfigError, match="is damaged") as caught:
        secrets.get("openai")
    assert KEY not in str(caught.value)


def test_environment_wins_over_the_file(secrets: SecretsFile) -> None:
    secrets.set("openai", KEY)
    assert ApiKeys(secrets, {}).lookup("openai") == KeyLookup(KEY, "secrets file")
    found = ApiKeys(secrets, {API_KEY_ENV: " sk-from-env "}).lookup("openai")
    assert (found.value, found.source) == ("sk-from-env", "env")
    missing = ApiKeys(secrets, {}).lookup("groq")
    assert (missing.value, missing.source) == (None, None)


@pytest.mark.parametrize("bad", ["", "   \n", "two words"])
def test_blank_or_broken_keys_are_refused(secrets: SecretsFile, bad: str) -> None:
    with pytest.raises(ConfigError):
        ApiKeys(secrets, {}).store("openai", bad)
    assert secrets.get("openai") is None


def test_redactor_scrubs_known_keys_and_bearer_credentials(secrets: SecretsFile) -> None:
    secrets.set("openai", KEY)
    keys = ApiKeys(secrets, {API_KEY_ENV: "env-key-999999"})
    text = f"echo {KEY} and env-key-999999; Authorization: Bearer unknown-token-abcdef"
    assert keys.redact(text) == ("echo [redacted] and [redacted]; Authorization: Bearer [redacted]")
    assert Redactor(["abc", "abcdef"])("xabcdefx abc") == "x[redacted]x [redacted]"


def test_every_key_stored_or_in_the_environment_is_redacted_every_time(
    secrets: SecretsFile,
) -> None:
    # Keys without a known prefix, so only knowing them can remove them.
    stored = {"openrouter": "orkey0123456789abcdef", "mistral": "mistralkey9876543210"}
    for provider, key in stored.items():
        secrets.set(provider, key)
    from_env = "envkey5566778899aabb"
    keys = ApiKeys(secrets, {API_KEY_ENV: from_env})
    text = " | ".join([*stored.values(), from_env] * 3)
    shown = keys.redact(text)
    assert shown == " | ".join(["[redacted]"] * 9)


async def test_the_retrieval_log_keeps_no_key(tmp_path: Path) -> None:
    log = SqliteRetrievalLog(connect(tmp_path / "state.db", MIGRATIONS), redact=Redactor([KEY]))
    await log.record("char:Mira", f"my key is {KEY}", {}, [{"text": KEY}], f"- {KEY}")
    record = await log.last("char:Mira")
    assert record is not None
    assert KEY not in f"{record.query} {record.candidates} {record.injected}"
