import io
import logging
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from charmemory.cli import run
from charmemory.services.providers import SENTINEL
from tests.support.scripted_llm import RecordedRequest, ScriptedLLMServer, Step

KEY = "sk-cli-secret-9f8e7d6c5b4a"
ENV_KEY = "sk-env-secret-1a2b3c4d5e6f"
CHARMEMORY = Path(sys.executable).with_name("charmemory")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("CHARMEMORY_"):
            monkeypatch.delenv(name)


@pytest.fixture
def ws(tmp_path: Path) -> str:
    path = str(tmp_path / "ws")
    assert run(["init", "-w", path]) == 0
    return path


class Cli:
    def __init__(
        self, ws: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ):
        self.ws = ws
        self.capsys = capsys
        self.monkeypatch = monkeypatch
        self.seen: list[str] = []  # everything printed, for leak checks

    def __call__(self, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        self.capsys.readouterr()
        if stdin is not None:
            self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = run([*args, "-w", self.ws])
        out, err = self.capsys.readouterr()
        self.seen += [out, err]
        return code, out, err


@pytest.fixture
def cli(
    ws: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Cli]:
    yield Cli(ws, capsys, monkeypatch)


@pytest.fixture
def configured(cli: Cli, llm_server: ScriptedLLMServer) -> Cli:
    """A workspace using the scripted server as OpenRouter, with a stored key."""
    assert cli("settings", "set", "model.provider", "openrouter")[0] == 0
    url = llm_server.base_url + "/chat/completions"
    assert cli("settings", "set", "model.base_url", url)[0] == 0
    assert cli("settings", "set", "model.model", "vendor/model-a")[0] == 0
    assert cli("settings", "set", "model.max_retries", "0")[0] == 0
    assert cli("secrets", "set", "openrouter", stdin=KEY + "\n")[0] == 0
    return cli


COMMANDS = [
    [],
    ["providers"],
    ["models"],
    ["test-model"],
    ["settings"],
    ["settings", "show"],
    ["settings", "set"],
    ["settings", "unset"],
    ["secrets"],
    ["secrets", "set"],
    ["secrets", "unset"],
    ["secrets", "list"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "charmemory")
def test_every_command_has_help(
    command: list[str], cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARMEMORY_API_KEY", ENV_KEY)
    code, out, _ = cli(*command, "--help")
    assert code == 0 and "Usage:" in out
    assert ENV_KEY not in out


def test_providers_lists_presets_without_keys(configured: Cli) -> None:
    code, out, _ = configured("providers")
    assert code == 0
    lines = {
        line.split()[1] if line.startswith("*") else line.split()[0]: line
        for line in out.splitlines()
    }
    assert {"openai", "anthropic", "nanogpt", "nvidia", "local-server", "custom", "local"} <= set(
        lines
    )
    assert lines["openrouter"].startswith("*") and "key set" in lines["openrouter"]
    assert "http://localhost:5001/v1" in lines["local-server"]
    assert "no key" in lines["groq"] and "no key needed" in lines["ollama"]
    assert KEY not in out


def test_providers_shows_each_providers_configured_base_url(
    configured: Cli, llm_server: ScriptedLLMServer
) -> None:
    own = "http://127.0.0.1:9/v1"
    assert configured("settings", "set", "model.base_url", own, "--provider", "groq")[0] == 0
    code, out, _ = configured("providers")
    assert code == 0
    lines = {
        line.split()[1] if line.startswith("*") else line.split()[0]: line
        for line in out.splitlines()
    }
    assert llm_server.base_url in lines["openrouter"] and "openrouter.ai" not in lines["openrouter"]
    assert own in lines["groq"] and "api.groq.com" not in lines["groq"]
    assert "https://api.openai.com/v1" in lines["openai"]  # not configured: the preset's


def row_of(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(name + " "))


def test_model_settings_set_show_unset(configured: Cli, llm_server: ScriptedLLMServer) -> None:
    code, out, _ = configured("settings", "show", "model")
    assert code == 0
    assert llm_server.base_url in row_of(out, "model.base_url")
    assert "provider openrouter" in row_of(out, "model.base_url")
    assert "vendor/model-a" in row_of(out, "model.model")
    code, out, _ = configured(
        "settings", "set", "model.extra_params", '{"reasoning": {"enabled": false}}'
    )
    assert (code, out) == (
        0,
        'model.extra_params = {"reasoning": {"enabled": false}} for provider openrouter\n',
    )
    code, out, _ = configured("settings", "show", "model", "--provider", "groq")
    assert "https://api.groq.com/openai/v1" in row_of(out, "model.base_url")

    assert configured("settings", "unset", "model.model")[1] == (
        "model.model unset for provider openrouter\n"
    )
    code, out, _ = configured("settings", "show", "model")
    assert row_of(out, "model.model").split()[1] == "-"


def test_bad_settings_are_one_clear_line(configured: Cli) -> None:
    code, _, err = configured("settings", "set", "model.extra_params", "thinking=off")
    assert code == 2 and err.count("\n") == 1 and "extra_params" in err and "not valid JSON" in err
    code, _, err = configured("settings", "set", "model.api_key", KEY)
    assert code == 2 and "secrets set" in err
    code, _, err = configured("settings", "set", "model.temperature", "hot")
    assert code == 2 and "temperature" in err


def test_environment_overrides_settings(
    configured: Cli, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHARMEMORY_PROVIDER", "custom")
    monkeypatch.setenv("CHARMEMORY_BASE_URL", llm_server.base_url + "/")
    monkeypatch.setenv("CHARMEMORY_MODEL", "env-model")
    monkeypatch.setenv("CHARMEMORY_API_KEY", ENV_KEY)
    llm_server.reply_text(SENTINEL)
    llm_server.reply_text(SENTINEL)

    code, out, _ = configured("test-model")

    assert code == 0 and out.startswith("ok: custom/env-model")
    request = llm_server.requests[0]
    assert request.json["model"] == "env-model"
    assert request.headers["authorization"] == f"Bearer {ENV_KEY}"
    assert configured("test-model", "--model", "flag-model")[1].startswith("ok: custom/flag-model")
    assert llm_server.requests[1].json["model"] == "flag-model"


def test_test_model_reports_ok_warning_and_error(
    configured: Cli, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text(SENTINEL, reasoning="think " * 10, usage=(25, 4))
    llm_server.reply_text("Hello! How can I help?")
    llm_server.reply(404, json={"error": {"message": "No endpoints found for vendor/model-a"}})

    code, out, _ = configured("test-model")
    assert code == 0 and "reasoning 60 chars; tokens 25 in, 4 out" in out
    code, out, _ = configured("test-model")
    assert code == 1 and "did not follow the instruction" in out and "How can I help" in out
    code, out, err = configured("test-model")
    assert code == 2 and out == "" and "No endpoints found for vendor/model-a" in err
    assert "charmemory models --provider openrouter" in err


def test_models_lists_and_filters(configured: Cli, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_models(["vendor/zeta", "vendor/alpha"])
    assert configured("models") == (0, "vendor/alpha\nvendor/zeta\n", "")

    nanogpt_api = llm_server.root_url + "/api/v1"
    assert (
        configured("settings", "set", "model.base_url", nanogpt_api, "--provider", "nanogpt")[0]
        == 0
    )
    assert configured("secrets", "set", "nanogpt", stdin=KEY)[0] == 0
    llm_server.reply_models(
        [
            {"id": "sao10k/l3.3-euryale-70b", "owned_by": "sao10k", "name": "Euryale"},
            {"id": "deepseek/deepseek-r1", "owned_by": "deepseek"},
            {"id": "openai/o3", "owned_by": "openai"},
        ],
        path="/api/subscription/v1/models",
    )
    code, out, _ = configured(
        "models", "--provider", "nanogpt", "--nanogpt-filter", "subscription",
        "--nanogpt-filter", "reasoning,open-source",
    )  # fmt: skip
    assert code == 0
    assert out == "deepseek:\n  deepseek/deepseek-r1\n"

    code, _, err = configured("models", "--nanogpt-filter", "roleplay")
    assert code == 2 and "none for this provider" in err


def test_secrets_set_reads_stdin_into_a_private_file(configured: Cli, ws: str) -> None:
    secrets = Path(ws) / "charmemory" / "secrets.json"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600
    assert KEY in secrets.read_text()
    code, out, _ = configured("secrets", "list")
    assert (code, out) == (0, "openrouter  (key set)\n")
    assert configured("secrets", "set", "groq", stdin="\n")[0] == 2
    assert configured("secrets", "unset", "openrouter")[0] == 0
    assert KEY not in secrets.read_text()


def test_secrets_set_from_a_pipe(ws: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHARMEMORY_")}
    done = subprocess.run(
        [str(CHARMEMORY), "secrets", "set", "nvidia", "-w", ws],
        input=KEY,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert KEY not in done.stdout + done.stderr
    secrets = Path(ws) / "charmemory" / "secrets.json"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600 and KEY in secrets.read_text()


def echo_credentials(request: RecordedRequest) -> Step:
    return Step(500, json={"error": {"message": f"bad header {request.headers['authorization']}"}})


def test_a_key_never_leaks(
    configured: Cli,
    ws: str,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    configured("settings", "set", "model.max_retries", "1")
    configured("settings", "set", "model.read_timeout", "0.3")
    llm_server.reply(401, json={"error": {"message": f"Incorrect API key provided: {KEY}"}})
    llm_server.reply_with(echo_credentials)
    llm_server.reply_with(echo_credentials)
    llm_server.reply(401, body=f"invalid x-api-key: {KEY}")
    llm_server.hang(5)

    results = [
        configured("test-model"),
        configured("test-model"),
        configured("models"),
        configured("test-model"),
    ]
    monkeypatch.setenv("CHARMEMORY_API_KEY", ENV_KEY)
    llm_server.reply(401, json={"error": {"message": f"key {ENV_KEY} revoked"}})
    results.append(configured("test-model"))
    results += [
        configured("providers"),
        configured("settings", "show"),
        configured("secrets", "list"),
    ]

    assert [code for code, _, _ in results[:5]] == [2, 2, 2, 2, 2]
    assert "read timeout" in results[3][2]
    assert sum("[redacted]" in err for _, _, err in results) >= 3
    conn = sqlite3.connect(Path(ws) / "charmemory" / "state.db")
    tables = [
        " ".join(map(str, tuple(row)))
        for table in ("activity", "settings")
        for row in conn.execute(f"SELECT * FROM {table}")
    ]
    conn.close()
    assert any("llm.test" in row for row in tables)
    produced = "\n".join([*configured.seen, caplog.text, *tables])
    assert KEY not in produced and ENV_KEY not in produced


def test_no_part_of_any_configured_key_leaks_from_a_long_error(
    configured: Cli, ws: str, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Keys with no known prefix: only knowing every configured key can remove them.
    other = "q7w8e9r0t1y2u3i4o5p6a7s8"
    env_key = "z9x8c7v6b5n4m3l2k1j0h9g8"
    assert configured("secrets", "set", "mistral", stdin=other + "\n")[0] == 0
    monkeypatch.setenv("CHARMEMORY_API_KEY", env_key)
    keys = (KEY, other, env_key)
    for at in (270, 285):  # each key sits across the 300-character cut once
        body = "x" * at + " keys " + " ".join(keys) + " " + " ".join(reversed(keys))
        llm_server.reply(500, body=body)
        llm_server.reply(500, json={"error": {"message": body}})
    results = [configured("test-model"), configured("models")] * 2
    assert [code for code, _, _ in results] == [2, 2, 2, 2]

    conn = sqlite3.connect(Path(ws) / "charmemory" / "state.db")
    logged = [" ".join(map(str, tuple(row))) for row in conn.execute("SELECT * FROM activity")]
    conn.close()
    produced = "\n".join([*configured.seen, *logged])
    assert "xxxx" in produced  # the error text did reach the terminal and the log
    for key in keys:
        assert not any(key[:n] in produced for n in range(6, len(key) + 1)), key
