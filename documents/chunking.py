"""Structure-aware chunking: a parsed document's blocks -> passages that each fit the embedding model's window.

- A heading closes the current chunk and opens a section; the first chunk of a section starts with its heading
  (and the headings right above it), and every chunk keeps its section title, heading level and section path.
- Paragraphs are kept whole when they fit; a chunk that is at least 60% full is closed at a paragraph boundary
  rather than splitting the next paragraph. Longer paragraphs are split between sentences, and a sentence longer
  than a window between words.
- Size: at most `embeddings.WINDOW_TOKENS` (254) word pieces counted with the embedding model's own tokenizer,
  which is everything all-MiniLM-L6-v2 reads (256 with [CLS] and [SEP]): the model sees every token of every
  chunk, nothing is truncated. (Seed 004's ~400 tokens would not fit the window.)
- Overlap: a chunk that continues the section of the previous one starts with the previous one's last ~10%
  (up to 25 word pieces, whole sentences when they fit, else from a word boundary); `metadata.overlap_chars`
  says how many leading characters repeat the previous chunk.
- Pages: `page_number` is the page a chunk starts on, `metadata.page_end` the page it ends on (PDF).

Deterministic: the same blocks always give the same chunks.
"""

import bisect
from dataclasses import dataclass, field

from documents.parsing import Block
from extraction.sentences import SENTENCE_END
from integrations import embeddings

MAX_TOKENS = embeddings.WINDOW_TOKENS
OVERLAP_TOKENS = MAX_TOKENS // 10
MIN_FILL = 0.6  # close a chunk at a paragraph boundary once it is this full
PARAGRAPH_SEPARATOR = "\n\n"



@dataclass
class ChunkSpec:
    content: str
    token_count: int
    page_number: int | None
    metadata: dict = field(default_factory=dict)


@dataclass
class _Piece:
    """A span of one block's text: [start, end) characters, `tokens` word pieces."""

    block: int
    start: int
    end: int
    tokens: int


def _token_starts(encoding) -> list[int]:
    return [offset[0] for offset in encoding.offsets]


def _count_in(starts: list[int], start: int, end: int) -> int:
    return bisect.bisect_left(starts, end) - bisect.bisect_left(starts, start)


def _word_cuts(encoding, lo: int, hi: int, limit: int) -> list[tuple[int, int]]:
    """Token ranges [a, b) covering [lo, hi) with at most `limit` tokens each, cut before a word's first piece
    when possible (a single word longer than `limit` is cut inside)."""
    word_ids = encoding.word_ids
    ranges = []
    a = lo
    while a < hi:
        b = min(a + limit, hi)
        if b < hi:
            cut = b
            while cut > a and word_ids[cut] is not None and word_ids[cut - 1] == word_ids[cut]:
                cut -= 1
            if cut > a:
                b = cut
        ranges.append((a, b))
        a = b
    return ranges


def _pieces(index: int, text: str, encoding) -> list[_Piece]:
    """The block's text as sentences, each at most MAX_TOKENS (longer ones cut between words)."""
    total = len(encoding.ids)
    if total == 0:
        return []
    starts = _token_starts(encoding)
    if total <= MAX_TOKENS and not SENTENCE_END.search(text):
        return [_Piece(index, 0, len(text), total)]
    bounds = [0] + [m.end() for m in SENTENCE_END.finditer(text)] + [len(text)]
    pieces = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        sentence_end = len(text[:end].rstrip())
        if sentence_end <= start:
            continue
        count = _count_in(starts, start, sentence_end)
        if count == 0:
            continue
        if count <= MAX_TOKENS:
            pieces.append(_Piece(index, start, sentence_end, count))
            continue
        first = bisect.bisect_left(starts, start)
        for a, b in _word_cuts(encoding, first, first + count, MAX_TOKENS):
            pieces.append(_Piece(index, encoding.offsets[a][0], encoding.offsets[b - 1][1], b - a))
    return pieces


class _Builder:
    def __init__(self, blocks: list[Block], texts: list[str], encodings):
        self.blocks = blocks
        self.texts = texts
        self.encodings = encodings
        self.chunks: list[ChunkSpec] = []
        self.pieces: list[_Piece] = []  # of the open chunk
        self.overlap_pieces = 0  # how many leading pieces repeat the previous chunk
        self.tokens = 0
        self.headings: list[tuple[int, str]] = []  # (level, title) stack
        self.section: dict = {}

    # the open chunk ------------------------------------------------------------------------------------------

    def body_tokens(self) -> int:
        return sum(p.tokens for p in self.pieces[self.overlap_pieces:] if self.blocks[p.block].heading_level == 0)

    def add(self, piece: _Piece) -> None:
        self.pieces.append(piece)
        self.tokens += piece.tokens

    def _text(self, pieces: list[_Piece]) -> str:
        parts: list[str] = []
        previous = None
        for piece in pieces:
            text = self.texts[piece.block]
            if previous is not None and previous.block == piece.block and previous.end <= piece.start:
                parts.append(text[previous.end:piece.start])
            elif parts:
                parts.append(PARAGRAPH_SEPARATOR)
            parts.append(text[piece.start:piece.end])
            previous = piece
        return "".join(parts)

    def close(self, *, keep_overlap: bool, final: bool = False) -> None:
        """Emit the open chunk and start the next one, with the tail of this one when the next continues the
        same section. Without body text nothing is emitted: the overlap is dropped and headings wait for the
        next heading's text (a chapter heading followed by a section heading) - except at the very end."""
        if self.body_tokens() == 0:
            if not keep_overlap and self.overlap_pieces:
                self.pieces = self.pieces[self.overlap_pieces:]
                self.overlap_pieces = 0
                self.tokens = sum(p.tokens for p in self.pieces)
            if not (final and self.pieces):
                return
        content = self._text(self.pieces)
        overlap_chars = len(self._text(self.pieces[: self.overlap_pieces])) if self.overlap_pieces else 0
        if overlap_chars:
            overlap_chars += len(self._separator_after(self.overlap_pieces))
        pages = [self.blocks[p.block].page for p in self.pieces if self.blocks[p.block].page is not None]
        metadata = {**self.section, "overlap_chars": overlap_chars}
        if pages:
            metadata["page_end"] = pages[-1]
        self.chunks.append(ChunkSpec(content, self.tokens, pages[0] if pages else None, metadata))
        tail = self._tail() if keep_overlap else []
        self.pieces, self.overlap_pieces, self.tokens = list(tail), len(tail), sum(p.tokens for p in tail)

    def _separator_after(self, count: int) -> str:
        if count >= len(self.pieces):
            return ""
        before, after = self.pieces[count - 1], self.pieces[count]
        if before.block == after.block:
            return self.texts[after.block][before.end:after.start]
        return PARAGRAPH_SEPARATOR

    def _tail(self) -> list[_Piece]:
        """The end of the closed chunk to repeat: trailing whole sentences within OVERLAP_TOKENS, else the last
        OVERLAP_TOKENS word pieces from a word boundary. Never headings."""
        body = [p for p in self.pieces[self.overlap_pieces:] if self.blocks[p.block].heading_level == 0]
        if sum(p.tokens for p in body) <= 2 * OVERLAP_TOKENS:
            return []  # a short chunk: repeating most of it would not help
        tail: list[_Piece] = []
        total = 0
        for piece in reversed(body):
            if total + piece.tokens > OVERLAP_TOKENS:
                break
            tail.insert(0, piece)
            total += piece.tokens
        if tail:
            return tail
        last = body[-1]
        encoding = self.encodings[last.block]
        starts = _token_starts(encoding)
        first = bisect.bisect_left(starts, last.start)
        end = first + last.tokens
        begin = end - OVERLAP_TOKENS
        word_ids = encoding.word_ids
        while begin < end and word_ids[begin] is not None and begin > 0 and word_ids[begin - 1] == word_ids[begin]:
            begin += 1  # start on a word's first piece
        if begin >= end:
            return []
        return [_Piece(last.block, encoding.offsets[begin][0], last.end, end - begin)]

    # blocks --------------------------------------------------------------------------------------------------

    def heading(self, index: int, block: Block, tokens: int) -> None:
        self.close(keep_overlap=False)
        if self.body_tokens() == 0 and self.tokens + tokens > MAX_TOKENS:
            self.pieces, self.overlap_pieces, self.tokens = [], 0, 0  # absurdly long run of headings
        while self.headings and self.headings[-1][0] >= block.heading_level:
            self.headings.pop()
        self.headings.append((block.heading_level, block.text))
        self.section = {
            "section_title": block.text,
            "heading_level": block.heading_level,
            "section_path": [title for _, title in self.headings],
        }
        self.add(_Piece(index, 0, len(block.text), tokens))

    def body(self, pieces: list[_Piece]) -> None:
        total = sum(p.tokens for p in pieces)
        if self.body_tokens() and self.tokens + total > MAX_TOKENS and self.tokens >= MIN_FILL * MAX_TOKENS:
            self.close(keep_overlap=True)
        for piece in pieces:
            if self.tokens + piece.tokens > MAX_TOKENS:
                if self.body_tokens() == 0:
                    # only overlap or headings so far: drop the overlap first, then the headings' share
                    self.pieces = [p for p in self.pieces[self.overlap_pieces:]]
                    self.overlap_pieces = 0
                    self.tokens = sum(p.tokens for p in self.pieces)
                    if self.tokens + piece.tokens > MAX_TOKENS:
                        self.pieces, self.tokens = [], 0
                else:
                    self.close(keep_overlap=True)
                    if self.tokens + piece.tokens > MAX_TOKENS:
                        self.pieces, self.overlap_pieces, self.tokens = [], 0, 0
            self.add(piece)


def chunk_blocks(blocks: list[Block]) -> list[ChunkSpec]:
    """The chunks of a parsed document, in order. Each has at most MAX_TOKENS word pieces (verified by
    counting the final text again)."""
    texts = [block.text for block in blocks]
    encodings = embeddings.tokenizer().encode_batch(texts, add_special_tokens=False) if texts else []
    builder = _Builder(blocks, texts, encodings)
    for index, (block, encoding) in enumerate(zip(blocks, encodings, strict=True)):
        tokens = len(encoding.ids)
        if tokens == 0:
            continue
        if block.heading_level and tokens <= MAX_TOKENS // 2:
            builder.heading(index, block, tokens)
        else:
            builder.body(_pieces(index, block.text, encoding))
    builder.close(keep_overlap=False, final=True)
    return _verified(builder.chunks)


def _verified(chunks: list[ChunkSpec]) -> list[ChunkSpec]:
    """Count every chunk's final text with the tokenizer; a chunk over the window (possible only after a cut
    inside a very long word) is cut again. `token_count` is always the real count."""
    if not chunks:
        return chunks
    encodings = embeddings.tokenizer().encode_batch([c.content for c in chunks], add_special_tokens=False)
    out: list[ChunkSpec] = []
    for chunk, encoding in zip(chunks, encodings, strict=True):
        if len(encoding.ids) <= MAX_TOKENS:
            chunk.token_count = len(encoding.ids)
            out.append(chunk)
            continue
        for a, b in _word_cuts(encoding, 0, len(encoding.ids), MAX_TOKENS - 8):
            piece = chunk.content[encoding.offsets[a][0]:encoding.offsets[b - 1][1]]
            out.extend(_verified([ChunkSpec(piece, 0, chunk.page_number, {**chunk.metadata, "overlap_chars": 0})]))
    return out
