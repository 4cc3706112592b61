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

from dataclasses import dataclass, field

from documents.parsing import Block, Deadline, TooLarge
from extraction.sentences import SENTENCE_END
from integrations import embeddings

MAX_TOKENS = embeddings.WINDOW_TOKENS
OVERLAP_TOKENS = MAX_TOKENS // 10
MIN_FILL = 0.6  # close a chunk at a paragraph boundary once it is this full
PARAGRAPH_SEPARATOR = "\n\n"
# Bounds of one step of the work: a span (a sentence, or a stretch of a longer one cut between words) is at most
# SPAN_CHARS characters, a run without a space is cut every WORD_CHARS (the tokenizer reads a longer word as one
# unknown piece), and the tokenizer gets ENCODE_BATCH spans at a time (the deadline is checked between them).
SPAN_CHARS = 4096
CUT_TOKENS = 32  # a sentence longer than the window is cut into pieces of about this many word pieces
WORD_CHARS = 100
ENCODE_BATCH = 256


@dataclass
class ChunkSpec:
    content: str
    token_count: int
    page_number: int | None
    metadata: dict = field(default_factory=dict)


@dataclass
class _Span:
    """A bounded stretch of one block's text, tokenised on its own: `start` is where it begins in the block,
    `offsets` (relative to `start`) and `word_ids` are its word pieces'. Every list here is at most SPAN_CHARS
    long, so no step reads more than one span's worth of tokens (a whole paragraph's lists, read per chunk, made
    chunking quadratic in a paragraph's length)."""

    block: int
    start: int
    end: int
    whole: bool  # a whole sentence (else a stretch of a longer one)
    offsets: list
    word_ids: list


@dataclass
class _Piece:
    """A span of one block's text: [start, end) characters, `tokens` word pieces (from token `first` of `span`)."""

    block: int
    start: int
    end: int
    tokens: int
    span: _Span | None = None
    first: int = 0


def _stripped_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _spans(text: str) -> list[tuple[int, int, bool]]:
    """The text as [start, end) ranges in order, none longer than SPAN_CHARS, each ending on a non-space: its
    sentences; a longer sentence cut between words; a run of SPAN_CHARS without a space every WORD_CHARS
    characters (the tokenizer reads a longer word as one unknown piece anyway); the third value says whether the
    range is a whole sentence. Linear in the text's length."""
    found: list[tuple[int, int, bool]] = []
    bounds = [0, *(m.end() for m in SENTENCE_END.finditer(text)), len(text)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        end = _stripped_end(text, start, end)
        while start < end and text[start].isspace():
            start += 1
        whole = end - start <= SPAN_CHARS
        while end - start > SPAN_CHARS:
            window = text[start:start + SPAN_CHARS]
            cut = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
            if cut > 0:
                found.append((start, _stripped_end(text, start, start + cut), False))
                start += cut
            else:
                found.extend((a, min(a + WORD_CHARS, start + SPAN_CHARS), False)
                             for a in range(start, start + SPAN_CHARS, WORD_CHARS))
                start += SPAN_CHARS
            while start < end and text[start].isspace():
                start += 1
        if start < end:
            found.append((start, end, whole))
    return found


def _word_cuts(word_ids: list, lo: int, hi: int, limit: int) -> list[tuple[int, int]]:
    """Token ranges [a, b) covering [lo, hi) with at most `limit` tokens each, cut before a word's first piece
    when possible (a single word longer than `limit` is cut inside)."""
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


def _encoded(index: int, text: str, ranges: list[tuple[int, int, bool]], tokenizer) -> list[_Span]:
    encodings = tokenizer.encode_batch([text[a:b] for a, b, _ in ranges], add_special_tokens=False)
    return [_Span(index, a, b, whole, encoding.offsets, encoding.word_ids)
            for (a, b, whole), encoding in zip(ranges, encodings, strict=True) if encoding.offsets]


def _pieces(index: int, spans: list[_Span]) -> list[_Piece]:
    """The block's spans as pieces: a sentence of at most MAX_TOKENS whole, a longer one cut between words every
    CUT_TOKENS or so (small pieces, so that chunks fill up to the window whatever the overlap)."""
    pieces = []
    for span in spans:
        if span.whole and len(span.offsets) <= MAX_TOKENS:
            pieces.append(_Piece(index, span.start, span.end, len(span.offsets), span, 0))
            continue
        for a, b in _word_cuts(span.word_ids, 0, len(span.offsets), CUT_TOKENS):
            pieces.append(_Piece(index, span.start + span.offsets[a][0], span.start + span.offsets[b - 1][1],
                                 b - a, span, a))
    return pieces


class _Builder:
    def __init__(self, blocks: list[Block], texts: list[str]):
        self.blocks = blocks
        self.texts = texts
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
        span, end = last.span, last.first + last.tokens
        begin = end - OVERLAP_TOKENS
        word_ids = span.word_ids
        while begin < end and word_ids[begin] is not None and begin > 0 and word_ids[begin - 1] == word_ids[begin]:
            begin += 1  # start on a word's first piece
        if begin >= end:
            return []
        return [_Piece(last.block, span.start + span.offsets[begin][0], last.end, end - begin, span, begin)]

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

    def body(self, pieces: list[_Piece], *, new_paragraph: bool = True) -> None:
        total = sum(p.tokens for p in pieces)
        if new_paragraph and self.body_tokens() and self.tokens + total > MAX_TOKENS \
                and self.tokens >= MIN_FILL * MAX_TOKENS:
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


def chunk_blocks(blocks: list[Block], *, deadline: Deadline | None = None,
                 max_chunks: int | None = None) -> list[ChunkSpec]:
    """The chunks of a parsed document, in order. Each has at most MAX_TOKENS word pieces (verified by
    counting the final text again). Linear in the text's length: every step reads one bounded span. Raises
    TooLarge past `max_chunks` chunks (as soon as they are made) and WorkBudgetExceeded when `deadline` passes."""
    deadline = deadline or Deadline(None)
    tokenizer = embeddings.tokenizer()
    texts = [block.text for block in blocks]
    builder = _Builder(blocks, texts)
    for index, block in enumerate(blocks):
        ranges = _spans(block.text)
        if block.heading_level and len(ranges) <= ENCODE_BATCH:  # a heading when short enough
            spans = _encoded(index, block.text, ranges, tokenizer)
            tokens = sum(len(span.offsets) for span in spans)
            if 0 < tokens <= MAX_TOKENS // 2:
                builder.heading(index, block, tokens)
                continue
        new_paragraph = True
        for at in range(0, len(ranges), ENCODE_BATCH):  # a long paragraph a bounded stretch at a time
            deadline.check()
            pieces = _pieces(index, _encoded(index, block.text, ranges[at:at + ENCODE_BATCH], tokenizer))
            if pieces:
                builder.body(pieces, new_paragraph=new_paragraph)
                new_paragraph = False
            if max_chunks is not None and len(builder.chunks) > max_chunks:
                raise too_many_chunks(max_chunks)
    builder.close(keep_overlap=False, final=True)
    chunks = _verified(builder.chunks, tokenizer, deadline)
    if max_chunks is not None and len(chunks) > max_chunks:
        raise too_many_chunks(max_chunks)
    return chunks


def too_many_chunks(limit: int) -> TooLarge:
    return TooLarge(f"The document makes more than {limit:,} passages to index; the most one document may make is "
                    f"{limit:,}. Split it into smaller documents.")


def _verified(chunks: list[ChunkSpec], tokenizer, deadline: Deadline) -> list[ChunkSpec]:
    """Count every chunk's final text with the tokenizer; a chunk over the window (possible only after a cut
    inside a very long word) is cut again. `token_count` is always the real count."""
    out: list[ChunkSpec] = []
    for at in range(0, len(chunks), ENCODE_BATCH):
        deadline.check()
        group = chunks[at:at + ENCODE_BATCH]
        encodings = tokenizer.encode_batch([c.content for c in group], add_special_tokens=False)
        for chunk, encoding in zip(group, encodings, strict=True):
            if len(encoding.ids) <= MAX_TOKENS:
                chunk.token_count = len(encoding.ids)
                out.append(chunk)
                continue
            offsets = encoding.offsets
            for a, b in _word_cuts(encoding.word_ids, 0, len(offsets), MAX_TOKENS - 8):
                piece = chunk.content[offsets[a][0]:offsets[b - 1][1]]
                out.extend(_verified([ChunkSpec(piece, 0, chunk.page_number, {**chunk.metadata, "overlap_chars": 0})],
                                     tokenizer, deadline))
    return out
