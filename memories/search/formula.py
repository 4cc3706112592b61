"""Memory search's ranking, declared once: every weight and constant of its scores, and the formulas that combine
them. To change a weight, change it here: nothing else holds a copy.

Each formula takes an algebra `m` first (memories.search.algebra: Floats, Arrays or Sql) and is written as plain
arithmetic, so one text serves the three places that compute it: ranking.py scores candidates with Floats,
snapshot_search.py computes BM25 over a snapshot's rows with Arrays, and sql.py (BM25) and ranking.with_context (the
relevance that picks the hits lending context) write their SQL with Sql. tests/memories/search/test_formula.py checks
that the three give the same scores and the same order."""

# --- the fused (default) ranking; weights chosen on LoCoMo (bench/locomo_recall.py) ----------------------------
SEMANTIC_WEIGHT = 0.3  # share of the calibrated cosine similarity; full text gets the rest
SEMANTIC_FLOOR, SEMANTIC_CEILING = 0.2, 0.7  # all-MiniLM-L6-v2 cosines: ~0.2 unrelated, ~0.7 a paraphrase
BM25_K1, BM25_B = 1.2, 0.4
SUBJECT_TF = 2  # a query word in the subject (weight A) counts like two occurrences
CONTEXT_SHARES = (0.5, 0.45)  # of a hit's relevance, lent to the memories 1 and 2 steps from it
CONTEXT_HITS = 30  # how many of the best hits lend to their neighbours
DATE_BONUS = 0.15  # the memory happened within a date the query names
INTENT_WEIGHT = 0.25  # the most a memory of exactly the kind a clear need asks for gains (memories.search.intent)
IMPORTANCE_WEIGHT = 0.1
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 30.0
# hybrid: a memory with none of the query's words (and no lent context) must be at least this similar to be
# related at all, so that what ranks is related and a search with nothing near returns nothing (FILL_TO below)
# (all-MiniLM-L6-v2 between a question and unrelated short texts: ~0.0-0.2; "What is her job?" to "I work as a
# nurse": 0.34). The model's unrelated level, as semantic mode's default threshold: at 0.25 a need phrased as a
# question lost the fact it needs when no word matched ("Is there any medicine I must never give her?" ->
# "The user is allergic to penicillin": 52 of bench/paraphrase_needs.py's 60 in the top 5 against 55)
MIN_SIMILARITY = SEMANTIC_FLOOR
# ... unless the query's nearest memory is clearly related (NEAR_BEST): then memories within NEAR_BAND of that one
# are related too, down to NEAR_FLOOR ("Which concert tickets would the user appreciate?": the nearest fact 0.31,
# "loves jazz" 0.19), and a cosine between NEAR_FLOOR and SEMANTIC_FLOOR ranks them by NEAR_SLOPE (the calibrated
# part is 0 there). A nearest memory that is itself barely related opens no band: "what does the user like?" ->
# "Prefers tea" 0.27 let "Lives in Paris" (0.16) and "has an iPhone 12" (0.13) in (bench/paraphrase_needs.py's
# figures are the same at 0.3 as at SEMANTIC_FLOOR, all four sets)
NEAR_BAND, NEAR_FLOOR, NEAR_SLOPE = 0.15, 0.1, 0.3
NEAR_BEST = 0.3
# a search that finds fewer related memories than FILL_TO is topped up to it with the nearly related (a cosine from
# FILL_FLOOR with the query, or with the kind of memory it asks for: above most unrelated pairs, 0.1 filled
# "allergy" with "Lives in Berlin"), nearest first, at score 0.
# A small model leaves a need and the fact it depends on there when world knowledge joins them ("Should we meet in
# the basement escape room?" -> "Is claustrophobic", 0.15); an agent judges five candidates. A list of five related
# memories or more is never padded, nor is the context endpoint's.
FILL_TO, FILL_FLOOR = 5, 0.15
# a keyword match on a memory unrelated by meaning (cosine <= GATE_FLOOR) counts KEYWORD_ALONE of itself, in full
# from GATE_FULL: a shared common word ("how does the user get to the office?" -> "Gets migraines from strong
# perfume", 0.08) must not outrank the fact the question needs
KEYWORD_ALONE, GATE_FLOOR, GATE_FULL = 0.3, 0.05, 0.25
# --- the other rankings -----------------------------------------------------------------------------------------
WEIGHTED_SIMILARITY, WEIGHTED_IMPORTANCE = 0.7, 0.3
RRF_K = 60
BM25_MIN_TOTAL_IDF = 1e-9  # a query whose words are in every row still divides by something
BM25_MIN_AVERAGE_LENGTH = 1.0  # rows of no lexemes at all do not shrink the average below one


def calibrated(m, similarity, floor=SEMANTIC_FLOOR, ceiling=SEMANTIC_CEILING):
    """all-MiniLM-L6-v2's cosine between short texts on 0..1: `floor` (unrelated) -> 0, `ceiling` (a paraphrase) ->
    1, more is more; no cosine -> 0."""
    return m.greatest(0.0, (m.missing(similarity, floor) - floor) / (ceiling - floor))


def near(m, similarity):
    """A cosine's share of the band below SEMANTIC_FLOOR (NEAR_FLOOR -> 0, SEMANTIC_FLOOR and more -> its width):
    what orders memories the calibrated cosine leaves at 0."""
    return m.greatest(0.0, m.least(m.missing(similarity, 0.0), SEMANTIC_FLOOR) - NEAR_FLOOR)


def semantic_part(m, similarity):
    return SEMANTIC_WEIGHT * (calibrated(m, similarity) + NEAR_SLOPE * near(m, similarity))


def keyword_gate(m, similarity):
    """How much of a keyword match counts: KEYWORD_ALONE for a memory unrelated by meaning, 1 from GATE_FULL and
    without a cosine (keyword mode, no stored vector)."""
    related = m.greatest(0.0, m.least(1.0, (m.missing(similarity, GATE_FULL) - GATE_FLOOR) / (GATE_FULL - GATE_FLOOR)))
    return KEYWORD_ALONE + (1 - KEYWORD_ALONE) * related


def keyword_part(m, keyword, similarity):
    return (1 - SEMANTIC_WEIGHT) * keyword * keyword_gate(m, similarity)


def relevance(m, similarity, keyword):
    """What a memory says about the query: the fused ranking's semantic and keyword parts (and what a hit lends
    its neighbours a share of)."""
    return semantic_part(m, similarity) + keyword_part(m, keyword, similarity)


def recency(m, updated, now):
    """1 for a memory changed now, halving every RECENCY_HALF_LIFE_DAYS (epoch seconds; none -> 0)."""
    age_days = m.greatest(0.0, (now - m.missing(updated, now)) / 86400)
    return m.where(m.known(updated), 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS), 0.0)


# --- the rankings: a candidate's parts, which add up to its score ------------------------------------------------
# Operands (any a ranking does not use may be left out): similarity (cosine or missing), keyword (BM25 share, 0
# without a match), semantic_rank / keyword_rank (1 = best, missing without one), importance, fresh (`recency`),
# context (lent by a hit), intent (memories.search.intent.boost), dated (it happened within a date the query names).


def fused_parts(m, *, similarity, keyword, context, intent, dated, importance, fresh, **_):
    return {
        "semantic": semantic_part(m, similarity),
        "keyword": keyword_part(m, keyword, similarity),
        "context": context,
        "intent": intent,
        "date": m.where(dated, DATE_BONUS, 0.0),
        "importance": IMPORTANCE_WEIGHT * importance,
        "recency": RECENCY_WEIGHT * fresh,
    }


def blend_parts(m, *, similarity, keyword, importance, fresh, **_):
    return {
        "semantic": semantic_part(m, similarity),
        "keyword": keyword_part(m, keyword, similarity),
        "importance": IMPORTANCE_WEIGHT * importance,
        "recency": RECENCY_WEIGHT * fresh,
    }


def weighted_parts(m, *, similarity, keyword, importance, **_):
    # without a cosine (keyword mode, degraded), the full-text share stands in for it
    stand_in = m.where(m.known(similarity), m.missing(similarity, 0.0), m.least(keyword, 1.0))
    return {"similarity": WEIGHTED_SIMILARITY * stand_in, "importance": WEIGHTED_IMPORTANCE * importance}


def rrf_parts(m, *, semantic_rank, keyword_rank, **_):
    return {
        "semantic": m.where(m.known(semantic_rank), 1 / (RRF_K + m.missing(semantic_rank, 0.0)), 0.0),
        "keyword": m.where(m.known(keyword_rank), 1 / (RRF_K + m.missing(keyword_rank, 0.0)), 0.0),
    }


def similarity_parts(m, *, similarity, **_):
    return {"semantic": similarity}


def keyword_parts(m, *, keyword, **_):
    return {"keyword": keyword}


PARTS = {"fused": fused_parts, "blend": blend_parts, "weighted": weighted_parts, "rrf": rrf_parts,
         "similarity": similarity_parts, "keyword": keyword_parts}


def score(m, parts: dict):
    """A candidate's score: its parts added in their order."""
    return m.total(list(parts.values()))


RANKINGS = {
    "fused": (
        f"Default for hybrid. Cosine similarity (calibrated: {SEMANTIC_FLOOR} -> 0, {SEMANTIC_CEILING} -> 1; "
        f"{NEAR_FLOOR}-{SEMANTIC_FLOOR} adds a little) x {SEMANTIC_WEIGHT} plus BM25 full-text relevance over the "
        f"stored tsvector (as a share of the query's total IDF) x {1 - SEMANTIC_WEIGHT:g}, of which a memory "
        f"unrelated by meaning (cosine <= {GATE_FLOOR}) keeps {KEYWORD_ALONE:.0%}; each of the {CONTEXT_HITS} best "
        f"hits lends "
        f"{' / '.join(f'{share:.0%}' for share in CONTEXT_SHARES)} of that to the memories stored "
        f"{' / '.join(str(i) for i in range(1, len(CONTEXT_SHARES) + 1))} places before and after it in the same "
        f"conversation (context: it adds to a memory related to the query in its own right, and makes none related); "
        f"+{DATE_BONUS} when the memory happened within a date the query names; up to "
        f"+{INTENT_WEIGHT} when the query asks for a kind of memory (a restriction, a preference, a goal, where they "
        "live: 'what should I not cook for them?') and the memory is of that kind, by its category or its meaning "
        f"(intent); + importance x {IMPORTANCE_WEIGHT} + recency x {RECENCY_WEIGHT} (half-life "
        f"{RECENCY_HALF_LIFE_DAYS:g} days since the last "
        "change)."
    ),
    "blend": f"The fused score without context and dates: {SEMANTIC_WEIGHT} x calibrated cosine + "
             f"{1 - SEMANTIC_WEIGHT:g} x BM25, plus the same importance and recency tie-breakers.",
    "weighted": f"Cosine similarity x {WEIGHTED_SIMILARITY} + importance x {WEIGHTED_IMPORTANCE} (in keyword mode or "
                "when degraded, the full-text relevance stands in for the similarity).",
    "rrf": f"Reciprocal-rank fusion: 1/({RRF_K} + semantic rank) + 1/({RRF_K} + full-text rank).",
    "similarity": "Cosine similarity alone (default for semantic mode).",
    "keyword": "BM25 full-text relevance alone, as a share of the query's total IDF (default for keyword mode).",
}
DEFAULT_RANKING = "fused"
MODE_RANKINGS = {"semantic": "similarity", "keyword": "keyword", "hybrid": DEFAULT_RANKING}


# --- BM25: the keyword score of memories (subject-weighted, `SUBJECT_TF`) and passages (occurrences) -------------


def bm25_idf(m, total, containing):
    """A word's IDF among `total` rows, `containing` of which hold it."""
    return m.ln(1 + (total - containing + 0.5) / (containing + 0.5))


def bm25_average(m, mean_length):
    """The average row length BM25 normalises by: the matching rows' mean number of distinct lexemes."""
    return m.greatest(mean_length, BM25_MIN_AVERAGE_LENGTH)


def bm25_norm(m, length, average, k1, b):
    """A row's length normalisation (`length` distinct lexemes against the rows' `average`)."""
    return k1 * (1 - b + b * length / average)


def bm25_term(m, idf, tf, norm, k1):
    """A matched word's term: its IDF, saturated by its term frequency `tf` against the row's `norm`."""
    return idf * tf * (k1 + 1) / (tf + norm)


def subject_weighted_term(m, held, in_subject, idf, norm, k1, subject_tf=SUBJECT_TF):
    """A memory's term for a query word: none unless it `held` the word; its term frequency is 1, or
    `subject_tf` when the word is in its subject (memories are one or two sentences: occurrences add nothing)."""
    return m.where(held, bm25_term(m, idf, m.where(in_subject, float(subject_tf), 1.0), norm, k1), 0.0)


def bm25_total_idf(m, idfs):
    return m.greatest(m.total(idfs), BM25_MIN_TOTAL_IDF)


def bm25_share(m, terms, total_idf):
    """A row's BM25 as a share of the query's total IDF (`bm25_total_idf`): 1 ~ every query word matched in an
    average row."""
    return m.total(terms) / total_idf
