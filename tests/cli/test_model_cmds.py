from pathlib import Path

import pytest

from charmemory.adapters.model_install import (
    DEFAULT_INSTALL,
    MODELS,
    MODELS_DIR_ENV,
    QWEN25_CODER_0_5B,
)
from charmemory.cli.application import run


@pytest.fixture
def empty_models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    return tmp_path


@pytest.mark.usefixtures("empty_models_dir")
def test_list_shows_every_model_and_marks_what_install_fetches_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["local-models", "list"]) == 0
    rows = {line.split("\t")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert set(rows) == set(MODELS)
    for spec in DEFAULT_INSTALL:
        assert rows[spec.name].endswith("not installed\t(default)")
    assert rows[QWEN25_CODER_0_5B.name].endswith("not installed")


@pytest.mark.usefixtures("empty_models_dir")
def test_installing_an_unknown_model_names_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["local-models", "install", "gpt-9"]) == 2
    err = capsys.readouterr().err
    assert "unknown local model 'gpt-9'" in err and QWEN25_CODER_0_5B.name in err
