from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from charmemory.adapters.embed_e5 import E5Embedder
from charmemory.adapters.model_install import MULTILINGUAL_E5_SMALL_Q4, InstalledModel
from charmemory.adapters.q4_encoder import (
    Encoder,
    ModelFileError,
    SentencePieceTokenizer,
    load_encoder,
)
from tests.support.q4_model import HIDDEN, PIECES, reference_embedding, tiny_model, write_model


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    return write_model(tiny_model(), tmp_path / "model.bin")


def ids(*pieces: str) -> list[int]:
    return [PIECES.index(piece) for piece in pieces]


def test_the_file_gives_its_shape_and_vocabulary(model_file: Path) -> None:
    encoder = load_encoder(model_file)

    assert (encoder.shape.hidden, encoder.shape.layers, encoder.shape.heads) == (HIDDEN, 2, 2)
    assert encoder.vocabulary.pieces[5] == ("▁hello", -5.0)
    assert (encoder.vocabulary.bos, encoder.vocabulary.eos, encoder.vocabulary.pad) == (0, 2, 1)


def test_the_tokenizer_normalises_and_takes_the_best_pieces(model_file: Path) -> None:
    tokenizer = SentencePieceTokenizer(load_encoder(model_file).vocabulary, max_tokens=16)

    # "▁hello" (-5) beats "▁" + "hel" + "lo" (-17); full-width "Ａ" reads "A"; the bell goes.
    assert tokenizer.ids(["hello  world\x07", "Ａ"]) == [
        [0, *ids("▁hello", "▁world"), 2],
        [0, *ids("▁", "A"), 2],
    ]
    assert (
        len(
            SentencePieceTokenizer(load_encoder(model_file).vocabulary, 4).ids(
                ["hello world seas"]
            )[0]
        )
        == 4
    )


def test_vectors_equal_a_plain_forward_pass(model_file: Path) -> None:
    model = tiny_model()
    encoder = load_encoder(write_model(model, model_file))
    text = [0, *ids("▁hello", "▁world", "▁sea", "s"), 2]

    vector = encoder.embed_ids(np.array([text]), np.ones((1, len(text)), dtype=np.int64))[0]

    assert vector == pytest.approx(reference_embedding(model, text), abs=2e-5)


def test_padding_changes_nothing(model_file: Path) -> None:
    encoder = load_encoder(model_file)
    short, long = [0, 5, 2], [0, 5, 6, 9, 10, 2]
    batch = np.array([[*short, 1, 1, 1], long])
    mask = np.array([[1, 1, 1, 0, 0, 0], [1] * 6])

    together = encoder.embed_ids(batch, mask)
    alone = [encoder.embed_ids(np.array([row]), np.ones((1, len(row)))) for row in (short, long)]

    assert together[0] == pytest.approx(alone[0][0], abs=1e-5)
    assert together[1] == pytest.approx(alone[1][0], abs=1e-5)


def test_a_file_of_another_kind_is_refused(tmp_path: Path, model_file: Path) -> None:
    (tmp_path / "other.bin").write_bytes(b"GGUF" + b"\x00" * 64)
    (tmp_path / "cut.bin").write_bytes(model_file.read_bytes()[:5000])

    with pytest.raises(ModelFileError, match="not a packed encoder"):
        load_encoder(tmp_path / "other.bin")
    with pytest.raises(ModelFileError, match="damaged"):
        load_encoder(tmp_path / "cut.bin")


async def test_the_embedder_keeps_order_and_batches_alike(model_file: Path) -> None:
    installed = InstalledModel(MULTILINGUAL_E5_SMALL_Q4, model_file.parent)
    texts = ["hello world seas", "sea", "hello", "world hello sea sea"]

    one_batch = await E5Embedder(installed, batch_size=8).embed(texts)
    one_by_one = np.stack([(await E5Embedder(installed).embed([t]))[0] for t in texts])

    assert one_batch.shape == (4, HIDDEN)
    assert np.linalg.norm(one_batch, axis=1) == pytest.approx(np.ones(4), abs=1e-5)
    assert one_batch == pytest.approx(one_by_one, abs=1e-5)


def test_the_encoder_runs_on_one_blas_thread(
    model_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several BLAS threads spin against each other on a busy 2-core machine (8x slower).
    blas = ThreadpoolController()

    def threads() -> list[int]:
        return [pool["num_threads"] for pool in blas.select(user_api="blas").info()]

    seen: list[int] = []
    forward = Encoder.embed_ids

    def watched(self: Encoder, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        seen.extend(threads())
        return forward(self, ids, mask)

    monkeypatch.setattr(Encoder, "embed_ids", watched)
    installed = InstalledModel(MULTILINGUAL_E5_SMALL_Q4, model_file.parent)
    with blas.limit(limits=2, user_api="blas"):
        if max(threads(), default=1) < 2:
            pytest.skip("this numpy's BLAS runs one thread whatever the limit")
        E5Embedder(installed).embed_blocking(["hello world"])

    assert seen and seen == [1] * len(seen)
