import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from charmemory.adapters.atomic_file import (
    FileLocks,
    FileVersion,
    delete_file,
    read_versioned,
    write_atomic,
)
from charmemory.errors import ConflictError

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def locks(tmp_path: Path) -> FileLocks:
    return FileLocks(tmp_path / "locks")


def test_write_then_read_back(tmp_path: Path, locks: FileLocks) -> None:
    target = tmp_path / "a.md"
    version = write_atomic(target, b"hello", expected=FileVersion(target, None), locks=locks)
    read = read_versioned(target)
    assert read.data == b"hello"
    assert read.version == version


def test_creating_refuses_when_file_appeared_meanwhile(tmp_path: Path, locks: FileLocks) -> None:
    target = tmp_path / "a.md"
    before = read_versioned(target).version
    target.write_bytes(b"typed by a person")
    with pytest.raises(ConflictError, match="changed on disk"):
        write_atomic(target, b"ours", expected=before, locks=locks)
    assert target.read_bytes() == b"typed by a person"


def test_update_refused_after_outside_edit(tmp_path: Path, locks: FileLocks) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"v1")
    seen = read_versioned(target).version
    target.write_bytes(b"v1 edited in an editor")
    with pytest.raises(ConflictError):
        write_atomic(target, b"v2", expected=seen, locks=locks)
    assert target.read_bytes() == b"v1 edited in an editor"
    assert not list(tmp_path.glob(".*.tmp"))


def test_the_data_is_on_disk_before_the_rename_and_the_rename_after_it(
    tmp_path: Path, locks: FileLocks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File fsync, rename, folder fsync: any other order can lose the file in a crash."""
    target = tmp_path / "a.md"
    target.write_bytes(b"old")
    steps: list[tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        steps.append(("fsync folder" if stat.S_ISDIR(info.st_mode) else "fsync file", info.st_ino))
        real_fsync(fd)

    def replace(source: str | Path, destination: str | Path) -> None:
        steps.append((f"rename to {Path(destination).name}", Path(source).stat().st_ino))
        real_replace(source, destination)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_atomic(target, b"new", expected=read_versioned(target).version, locks=locks)

    assert [step for step, _ in steps] == ["fsync file", "rename to a.md", "fsync folder"]
    written = target.stat().st_ino
    assert steps[0][1] == steps[1][1] == written  # the file fsynced is the one renamed
    assert steps[2][1] == tmp_path.stat().st_ino  # and the folder is the target's
    assert target.read_bytes() == b"new"


def test_delete_checks_version(tmp_path: Path, locks: FileLocks) -> None:
    target = tmp_path / "a.md"
    target.write_bytes(b"v1")
    seen = read_versioned(target).version
    target.write_bytes(b"v2")
    with pytest.raises(ConflictError):
        delete_file(target, expected=seen, locks=locks)
    delete_file(target, expected=read_versioned(target).version, locks=locks)
    assert not target.exists()


def test_stale_temporary_from_a_dead_writer_is_cleaned(tmp_path: Path, locks: FileLocks) -> None:
    target = tmp_path / "a.md"
    (tmp_path / ".a.md.99999.tmp").write_bytes(b"half")
    write_atomic(target, b"whole", expected=FileVersion(target, None), locks=locks)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["a.md"]


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from charmemory.adapters.atomic_file import FileLocks, write_atomic
    target = Path(sys.argv[1])
    locks = FileLocks(Path(sys.argv[2]))
    payloads = [b"A" * 4_000_000, b"B" * 6_000_000]
    print("ready", flush=True)
    i = 0
    while True:
        write_atomic(target, payloads[i % 2], expected=None, locks=locks)
        i += 1
    """
)


def test_killed_writer_leaves_old_or_new_file_never_torn(tmp_path: Path) -> None:
    target = tmp_path / "memories.md"
    target.write_bytes(b"A" * 4_000_000)
    valid = {b"A" * 4_000_000, b"B" * 6_000_000}
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": SRC}
    for _ in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target), str(tmp_path / "locks")],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.01, 0.15))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert target.read_bytes() in valid
    # The next writer finds and removes whatever temporary the dead one left.
    locks = FileLocks(tmp_path / "locks")
    write_atomic(target, b"final", expected=None, locks=locks)
    assert [p.name for p in tmp_path.glob(".*.tmp")] == []
