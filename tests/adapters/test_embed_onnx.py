import json
import threading
from pathlib import Path

import numpy as np
import pytest

from charmemory.adapters.compute_thread import on_compute_thread
from charmemory.adapters.embed_onnx import OnnxEmbedder
from charmemory.adapters.model_install import (
    MINILM_L6_V2_INT8,
    InstalledModel,
    ModelInstaller,
    ModelNotInstalledError,
)
from charmemory.ports import Embedder

REFERENCE = Path(__file__).parent / "data" / "minilm_reference.json"


@pytest.fixture(scope="session")
def minilm() -> InstalledModel:
    """The real model, installed once into the persistent models cache."""
    return ModelInstaller().install(MINILM_L6_V2_INT8)


@pytest.fixture(scope="session")
def embedder(minilm: InstalledModel) -> OnnxEmbedder:
    return OnnxEmbedder(minilm, intra_op_threads=1, batch_size=4)


def test_a_missing_model_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(ModelNotInstalledError, match="charmemory local-models install all-minilm"):
        OnnxEmbedder(models_dir=tmp_path)


@pytest.mark.local_model
async def test_vectors_agree_with_the_fp32_reference_model(embedder: OnnxEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    expected = np.array(reference["vectors"], dtype=np.float32)

    vectors = await embedder.embed(reference["texts"])

    cosines = (vectors * expected).sum(axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.99, cosines


@pytest.mark.local_model
async def test_vectors_are_unit_rows_in_input_order(embedder: OnnxEmbedder) -> None:
    texts = ["a much longer sentence about the harbour and its ships", "cat", "the dragon"]
    together = await embedder.embed(texts)
    alone = np.vstack([await embedder.embed([text]) for text in texts])

    assert isinstance(embedder, Embedder)
    assert together.shape == (3, 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.allclose((together * alone).sum(axis=1), 1.0, atol=1e-4)
    assert (await embedder.embed([])).shape == (0, 384)


@pytest.mark.local_model
async def test_paraphrases_are_closer_than_unrelated_text(embedder: OnnxEmbedder) -> None:
    fear, paraphrase, unrelated = await embedder.embed(
        [
            "Elara is terrified of deep water.",
            "She panics whenever she has to swim in the lake.",
            "The blacksmith sells iron nails by the pound.",
        ]
    )
    assert float(fear @ paraphrase) > float(fear @ unrelated) + 0.2


@pytest.mark.local_model
async def test_inference_runs_off_the_event_loop_thread(
    minilm: InstalledModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = OnnxEmbedder(minilm, intra_op_threads=1)
    threads: list[int] = []
    run = embedder._run

    def spy(texts: list[str]) -> np.ndarray:
        threads.append(threading.get_ident())
        return run(texts)

    monkeypatch.setattr(embedder, "_run", spy)
    await embedder.embed(["hello there"])
    await embedder.embed(["and again"])
    # The thread the index ranks on: a query's steps share one warm thread.
    ranking = await on_compute_thread(threading.get_ident)

    assert threads and threading.get_ident() not in threads
    assert set(threads) == {ranking}
    assert embedder._session.get_session_options().intra_op_num_threads == 1
