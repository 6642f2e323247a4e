from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import sillytavern_samples
from tests.support.sillytavern_samples import sillytavern_sample


@pytest.fixture
def samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sillytavern_samples, "SAMPLES", tmp_path)
    return tmp_path


def test_the_samples_folder_is_the_shared_one_beside_the_repository() -> None:
    repository = Path(__file__).resolve().parents[2]

    assert (repository / "pyproject.toml").is_file()
    assert repository.parent / "shared" / "fixtures" / "sillytavern" == sillytavern_samples.SAMPLES


def test_a_present_sample_is_returned(samples: Path) -> None:
    (samples / "card.png").write_bytes(b"png")

    assert sillytavern_sample("card.png") == samples / "card.png"


def test_a_missing_sample_skips_with_its_name_outside_ci(
    samples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)

    with pytest.raises(pytest.skip.Exception, match=r"'card\.png' is not in"):
        sillytavern_sample("card.png")


@pytest.mark.parametrize("value", ["false", "1", ""])
def test_only_ci_true_turns_the_skip_into_a_failure(
    samples: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)

    with pytest.raises(pytest.skip.Exception):
        sillytavern_sample("card.png")


def test_a_missing_sample_fails_in_ci(samples: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")

    with pytest.raises(pytest.fail.Exception, match="CI must run"):
        sillytavern_sample("card.png")
