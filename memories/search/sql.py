"""The SQL of search: the one builder of nearest-vector and BM25 candidates that memories, document chunks and
conversation messages share, and the round trip that starts a search transaction.

Every statement reads only the owner's rows: the caller's filtered queryset (owner first) is compiled once and
used as the row source of each raw statement, which also names `owner_id = %s` itself. Row-level security is the
second layer. Raw SQL because the shapes the planner needs (a MATERIALIZED nearest-neighbour CTE ordered by the
indexed expression, BM25 over the stored tsvector, LATERAL neighbour lookups) are not expressible in the ORM."""

import hashlib

from django.core.cache import cache
from pgvector import HalfVector

from integrations.embeddings import model_of
from memories.models import EMBEDDING_DIMENSIONS
from memories.search import formula
from memories.search.algebra import Sql

VECTOR = f"halfvec({EMBEDDING_DIMENSIONS})"
EPOCH = "extract(epoch FROM {})::float8"
MAX_QUERY_LEXEMES = 32
WORD_FREQUENCIES_CACHE_SECONDS = 600
FREQUENCY_SAMPLE = 1000  # newest memories a large owner's word frequencies are estimated from (`word_frequencies`)
FREQUENCY_EXACT_BELOW = 20  # sample hits under which a word is counted instead
# the bounded keyword side's tiers repeat every word's flags: queries with more words read every matching row
MAX_BOUNDED_LEXEMES = 8
# a query's distinct stemmed words in the order it says them, stop words left out (the indexes' configuration),
# and the words of the second parameter left out too: the words that name whom the searched rows are about ("the
# user", the owner's name: memories.search.query.owner_words), which every one of them may say
QUERY_LEXEMES = ("ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', %s)) "
                 "WHERE lexeme <> ALL(tsvector_to_array(to_tsvector('english', %s))) ORDER BY positions[1])")


def rows_source(base, fields) -> tuple[str, tuple]:
    """The filtered rows as SQL to select from (PostgreSQL pulls the subquery up into the outer query, so the
    indexes on the table still serve the outer WHERE and ORDER BY)."""
    sql, params = base.order_by().values(*fields).query.sql_with_params()
    return f"({sql})", tuple(params)


def search_start(cursor, query: str, *, ef_search: int | None, serial: bool = False, unweighted: str = "") -> list[str]:
    """One round trip at the start of a search transaction (memories, chunks, messages): the query's distinct
    stemmed words, stop words and the words of `unweighted` left out (same 'english' configuration as the
    indexes), and with `ef_search` the
    HNSW settings of this transaction (filtered nearest neighbours: iterative index scans return enough rows for
    large owners too). `serial`: no parallel workers in this transaction (see below)."""
    # enable_sort off: for an owner with a few percent of a large table the planner prices reading all of the
    # owner's rows through the owner B-tree and sorting them by distance below the filtered HNSW scan (pgvector's
    # estimate), and takes it: 220-290 ms for 50k of 1M memories against 10-60 ms for the index (BENCHMARKS.md,
    # 1M). This transaction exists to use the index; sorts nothing else can replace (BM25's top k) still run.
    settings = (", set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true)"
                ", set_config('enable_sort', 'off', true)" if ef_search else "")
    # serial: the bounded keyword side's tiers name the owner in a way the planner cannot estimate, and it planned
    # parallel workers for their thousand rows: starting them cost more than the rows (5-6 ms a statement, 1M)
    settings += ", set_config('max_parallel_workers_per_gather', '0', true)" if serial else ""
    cursor.execute(f"SELECT {QUERY_LEXEMES}{settings}",
                   [query, unweighted, str(ef_search)] if ef_search else [query, unweighted])
    return cursor.fetchone()[0][:MAX_QUERY_LEXEMES]


def tsquery_term(lexeme: str, weight: str = "") -> str:
    """One lexeme as tsquery text, quoted (no re-parsing or re-stemming), optionally restricted to a weight."""
    quoted = "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"
    return f"{quoted}:{weight}" if weight else quoted


def keyword_match(owner_id: int, lexemes: list[str]) -> tuple[str, list[str]]:
    """The condition (over alias `m`) that a row has any of `lexemes`, and its parameters. The match is asked of
    the owner's own index entries (memories.models.owner_lexemes_index: words prefixed with the owner's id), so
    it never reads another user's entries: with the (owner, search_vector) GIN it did, and a word common in
    someone else's rows made the search measurably slower (BENCHMARKS.md, "Full-text timing"). The plain match
    beside it is the same test; the planner checks it first where the index cannot be used (per-row cost)."""
    prefixed = " | ".join(tsquery_term(f"{owner_id}:{lexeme}") for lexeme in lexemes)
    plain = " | ".join(tsquery_term(lexeme) for lexeme in lexemes)
    return ("memento_owner_lexemes(m.owner_id, m.search_vector) @@ %s::tsquery AND m.search_vector @@ %s::tsquery",
            [prefixed, plain])


def word_frequencies(cursor, owner_id: int, lexemes: list[str], *, total: int, table: str = "memories_memory",
                     newest: bool = True) -> list[int]:
    """How many of the owner's memories (`total` of them) hold each of `lexemes` (BM25's document frequencies), for
    the bounded keyword side of large owners (`bounded_tiers`). Counting a common word costs a visit to each of its
    rows (~8 ms for 5,000 of the 1M bench's heavy user): as much as scoring them, the cost the bound is there to
    avoid. So a word's frequency is estimated from the owner's FREQUENCY_SAMPLE newest memories, and counted only
    where the sample holds it fewer than FREQUENCY_EXACT_BELOW times (a rare word: a noisy estimate, a cheap count);
    for a word in 10% of the rows the estimate is within ~10%, which moves its IDF by ~4%. Frequencies are reused for
    WORD_FREQUENCIES_CACHE_SECONDS (a large owner's move little in that time), and BM25 never takes one below the
    rows it reads with the word.

    `table`: another table of owned rows with a `search_vector` (conversation messages); `newest=False` samples
    any FREQUENCY_SAMPLE of the owner's rows (a table without an (owner, created_at) index, where the newest
    would mean sorting all of a large owner's rows)."""
    keys = {lexeme: f"{table}:df:{owner_id}:{hashlib.blake2b(lexeme.encode(), digest_size=12).hexdigest()}"
            for lexeme in lexemes}
    known = cache.get_many(list(keys.values()))
    missing = [lexeme for lexeme in lexemes if keys[lexeme] not in known]
    if missing:
        hits = ", ".join(f"count(*) FILTER (WHERE s.search_vector @@ %s::tsquery) AS h{i}"
                         for i in range(len(missing)))
        # `owner_id + 0`: only the owner-prefixed GIN can serve the count; AND-ing the owner's B-tree (tens of
        # thousands of entries for a large owner) into its bitmap cost more than the count (BENCHMARKS.md, 1M).
        # A CASE evaluates the count's subquery only for the words that take that branch.
        frequencies = ", ".join(
            f"CASE WHEN h.h{i} < %s OR h.n < %s THEN (SELECT count(*) FROM {table} AS m "
            f"WHERE m.owner_id + 0 = %s AND memento_owner_lexemes(m.owner_id, m.search_vector) @@ %s::tsquery) "
            f"ELSE round(h.h{i} * %s::float8 / h.n)::bigint END" for i in range(len(missing)))
        params = [owner_id, FREQUENCY_SAMPLE, *(tsquery_term(lexeme) for lexeme in missing)]
        for lexeme in missing:
            params += [FREQUENCY_EXACT_BELOW, FREQUENCY_SAMPLE, owner_id, tsquery_term(f"{owner_id}:{lexeme}"), total]
        cursor.execute(
            f"WITH s AS MATERIALIZED (SELECT m.search_vector FROM {table} AS m WHERE m.owner_id = %s "
            f"{'ORDER BY m.created_at DESC ' if newest else ''}LIMIT %s), h AS (SELECT count(*) AS n, {hits} FROM s) "
            f"SELECT {frequencies} FROM h", params)
        found = dict(zip([keys[lexeme] for lexeme in missing], cursor.fetchone(), strict=True))
        cache.set_many(found, WORD_FREQUENCIES_CACHE_SECONDS)
        known.update(found)
    return [known[keys[lexeme]] for lexeme in lexemes]


def bounded_tiers(owner_id: int, lexemes: list[str], frequencies: list[int]) -> list[tuple[str, str]]:
    """The rows holding any of `lexemes`, in tiers read in order until the bounded keyword side has read its rows:
    first the rows holding every query word the owner has, then the rows holding the rarest word (and not read
    before), then the next rarest, and so on; (owner-prefixed tsquery, plain tsquery) per tier. The rows with the
    best BM25 hold the most and the rarest words, so they come first; what the bound leaves unread are rows whose
    only matches are the commonest words, where BM25 tells rows apart by their length alone."""
    present = [lexeme for _, _, lexeme in sorted(
        (frequency, i, lexeme) for i, (lexeme, frequency) in enumerate(zip(lexemes, frequencies, strict=True))
        if frequency > 0)]
    tiers, before_prefixed, before_plain = [], [], []
    if len(present) > 1:
        tiers.append((" & ".join(tsquery_term(f"{owner_id}:{w}") for w in present),
                      " & ".join(tsquery_term(w) for w in present)))
        before_prefixed.append(f"({tiers[0][0]})")
        before_plain.append(f"({tiers[0][1]})")
    for word in present:
        prefixed, plain = tsquery_term(f"{owner_id}:{word}"), tsquery_term(word)
        tiers.append((" & ".join([prefixed, *(f"!{q}" for q in before_prefixed)]),
                      " & ".join([plain, *(f"!{q}" for q in before_plain)])))
        before_prefixed.append(prefixed)
        before_plain.append(plain)
    return tiers


def _subject_weighted_bm25(rows_sql, rows_params, owner_id, lexemes, *, k1, b, subject_tf, total, bounded=None):
    """BM25 where a query word counts once per row, `subject_tf` times when it is in the subject (weight A):
    memories are one or two sentences, so positions add nothing but cost.

    `bounded` (large owners: (document frequencies, most rows)) reads at most that many of the matching rows,
    tier by tier (`bounded_tiers`), and takes the words' document frequencies from `word_frequencies` instead of
    counting them among the rows read."""
    ctes, params = [], []
    # each row's matches are worked out once: per query word, in the row at all (h) and in its subject (a)
    flags = ", ".join(f"m.search_vector @@ %s::tsquery AS h{i}, m.search_vector @@ %s::tsquery AS a{i}"
                      for i in range(len(lexemes)))
    flag_params = [p for lexeme in lexemes for p in (tsquery_term(lexeme), tsquery_term(lexeme, "A"))]
    select = f"SELECT m.id, length(m.search_vector)::float8 AS dl, {flags} FROM {rows_sql} AS m"
    if bounded is None:
        match, match_params = keyword_match(owner_id, lexemes)
        ctes.append(f"kwm AS MATERIALIZED ({select} WHERE m.owner_id = %s AND {match})")
        params += [*flag_params, *rows_params, owner_id, *match_params]
        frequencies = [f"count(*) FILTER (WHERE h{i})" for i in range(len(lexemes))]
    else:
        known, most = bounded
        # the tiers' rows are disjoint; the Append stops pulling rows (and so reading them) at the limit. The
        # owner's condition as `owner_id + 0`: see `word_frequencies`
        tiers = bounded_tiers(owner_id, lexemes, known)
        ctes.append("kwm AS MATERIALIZED (SELECT * FROM (" + " UNION ALL ".join(
            f"({select} WHERE m.owner_id + 0 = %s AND memento_owner_lexemes(m.owner_id, m.search_vector) "
            f"@@ %s::tsquery AND m.search_vector @@ %s::tsquery)" for _ in tiers) + ") AS t LIMIT %s)")
        for prefixed, plain in tiers:
            params += [*flag_params, *rows_params, owner_id, prefixed, plain]
        params.append(most)
        frequencies = [f"greatest(count(*) FILTER (WHERE h{i}), {int(n)})" for i, n in enumerate(known)]
    # document frequencies among the owner's rows (every row with any query word is in kwm, unless bounded),
    # turned into IDFs once per query; float8 throughout (numeric arithmetic per row cost more than the matching)
    counts = ", ".join(f"{frequency}::float8 AS n{i}" for i, frequency in enumerate(frequencies))
    ctes.append(
        f"stats AS (SELECT {counts}, {formula.bm25_average(Sql, Sql('avg(dl)'))} AS avgdl, "
        f"greatest(%s, count(*))::float8 AS total FROM kwm)"
    )
    params.append(total)
    idfs = ", ".join(f"{formula.bm25_idf(Sql, Sql('total'), Sql(f'n{i}'))} AS i{i}" for i in range(len(lexemes)))
    total_idf = formula.bm25_total_idf(Sql, [Sql(f"i{i}") for i in range(len(lexemes))])
    ctes.append(f"idf AS (SELECT *, {total_idf} AS total_idf FROM (SELECT {idfs}, avgdl FROM stats) AS t)")
    terms = [formula.subject_weighted_term(Sql, Sql(f"x.h{i}"), Sql(f"x.a{i}"), Sql(f"s.i{i}"), Sql("x.norm"), k1,
                                           subject_tf) for i in range(len(lexemes))]
    norm = formula.bm25_norm(Sql, Sql("kwm.dl"), Sql("idf.avgdl"), k1, b)
    score = (f"SELECT x.id, {formula.bm25_share(Sql, terms, Sql('s.total_idf'))} AS score "
             f"FROM (SELECT kwm.*, {norm} AS norm FROM kwm, idf) AS x, idf AS s")
    return ctes, params, score, []


def _positions_bm25(rows_sql, rows_params, owner_id, lexemes, *, k1, b, table, total=None, bounded=None):
    """BM25 with each word's occurrences counted from the tsvector's positions (passages are long). N is the
    owner's rows in `table`, counted here unless `total` gives it. `bounded` (large owners: (document
    frequencies, most rows)) reads at most that many of the matching rows, tier by tier, as
    `_subject_weighted_bm25` does."""
    # v: only the query's words of the row's tsvector (passages' have no weights), read once: counting and
    # unnesting the whole vector of a long turn, detoasted at every use, was most of LongMemEval's message search
    select = (f"SELECT m.id, ts_filter(setweight(m.search_vector, 'A', %s::text[]), '{{a}}') AS v, "
              f"length(m.search_vector) AS dl FROM {rows_sql} AS m")
    rows_params = (list(lexemes), *rows_params)
    if bounded is None:
        match, match_params = keyword_match(owner_id, lexemes)
        ctes = [f"kwm AS MATERIALIZED ({select} WHERE m.owner_id = %s AND {match})"]
        params = [*rows_params, owner_id, *match_params]
        frequencies = ["count(*) FILTER (WHERE v @@ %s::tsquery)" for _ in lexemes]
    else:
        known, most = bounded
        tiers = bounded_tiers(owner_id, lexemes, known)
        ctes = ["kwm AS MATERIALIZED (SELECT * FROM (" + " UNION ALL ".join(
            f"({select} WHERE m.owner_id + 0 = %s AND memento_owner_lexemes(m.owner_id, m.search_vector) "
            f"@@ %s::tsquery AND m.search_vector @@ %s::tsquery)" for _ in tiers) + ") AS t LIMIT %s)"]
        params = [p for prefixed, plain in tiers for p in (*rows_params, owner_id, prefixed, plain)] + [most]
        frequencies = [f"greatest(count(*) FILTER (WHERE v @@ %s::tsquery), {int(n)})" for n in known]
    # float8, not numeric: the per-row arithmetic below is the bulk of a keyword search's time. MATERIALIZED: used
    # once, the planner inlined it and ran its aggregate again for every matching row (449 rows of a LoCoMo
    # conversation: 190 ms of a 237 ms statement; bench/context_latency.py)
    counts = ", ".join(f"{frequency}::float8 AS n{i}" for i, frequency in enumerate(frequencies))
    n = "%s" if total is not None else f"(SELECT count(*) FROM {table} WHERE owner_id = %s)"
    ctes.append(f"stats AS MATERIALIZED (SELECT {counts}, {formula.bm25_average(Sql, Sql('avg(dl)'))} AS avgdl, "
                f"{n}::float8 AS total FROM kwm)")
    params += [tsquery_term(lexeme) for lexeme in lexemes] + [total if total is not None else owner_id]
    idf = [formula.bm25_idf(Sql, Sql("s.total"), Sql(f"s.n{i}")) for i in range(len(lexemes))]
    norm = formula.bm25_norm(Sql, Sql("x.dl"), Sql("s.avgdl"), k1, b)
    # every word's occurrences from one pass over the row's tsvector (a pass per word cost ~15 us a row each)
    tfs = ", ".join(f"coalesce(sum(cardinality(u.positions)) FILTER (WHERE u.lexeme = %s), 0)::float8 AS tf{i}"
                    for i in range(len(lexemes)))
    terms = [formula.bm25_term(Sql, idf[i], Sql(f"t.tf{i}"), norm, k1) for i in range(len(lexemes))]
    share = formula.bm25_share(Sql, terms, formula.bm25_total_idf(Sql, idf))
    score = (f"SELECT x.id, {share} AS score "
             f"FROM kwm AS x CROSS JOIN LATERAL (SELECT {tfs} FROM unnest(x.v) AS u) AS t, stats AS s")
    return ctes, params, score, list(lexemes)


def candidates(cursor, *, base=None, fields=(), rows: tuple[str, tuple] | None = None, table: str, owner_id: int,
               vector, lexemes: list[str], k: int, k1: float, b: float, subject_tf: float | None = None,
               total: int | None = None, columns: tuple[str, ...] = (), exact: bool = False,
               nearest: int | None = None, bounded: tuple[list[int], int] | None = None,
               keyword_rows: tuple[str, tuple] | None = None, then=None) -> list[tuple]:
    """The k nearest and the k best full-text matches among `base`'s rows of `table` (memories, document chunks,
    conversation messages: rows with `embedding` and `search_vector` columns), as (id, cosine or None, BM25
    share, *columns) rows; `columns` are more expressions over the table (alias `m`).

    BM25 is a share of the query's total IDF (1 ~ every query word matched in an average row); its term
    frequency is what differs by kind of row: with `subject_tf` (memories, N = `total`) a word counts once, or
    `subject_tf` times in the subject; without, occurrences are counted from the tsvector's positions (passages,
    N = `total` or counted in the statement). The rows are `rows` (SQL and parameters from `rows_source`) or
    `base`'s `fields`.

    `exact` orders the owner's rows by their true distance (read through the owner's B-tree, no HNSW): exact and
    cheaper than the index for small owners (bench/search_profile.py); otherwise the filtered HNSW index serves
    the nearest vectors (the caller sets its iterative scan). `nearest` asks for that many nearest vectors
    instead of k: a filtered HNSW scan reads about k / (the owner's share of the table) index entries and rows.
    `bounded` ((the words' document frequencies, most rows)) bounds the rows full text reads and scores
    (`_subject_weighted_bm25`, `_positions_bm25`); `keyword_rows` are the same rows for full text, differently
    written (see memories.search.query.memory_rows).

    `then(ctes, select, params)` may extend the statement (more CTEs over the candidates' select, another final
    SELECT) and returns (ctes, select, params): work that needs the candidates runs in the same round trip."""
    rows_sql, rows_params = rows if rows is not None else rows_source(base, fields)
    ctes, params, sources = [], [], []
    if vector is not None:
        vector_text = HalfVector(vector).to_text()
        # `+ 0` is not the index's ordering operator, so the planner cannot take the HNSW path; the distance (and
        # so every similarity) is the same halfvec one either way
        distance = f"m.embedding::{VECTOR} <=> %s::{VECTOR}"
        # exact: ties by id, as memories.search.snapshot breaks them (the index path cannot, and needs not: equal
        # distances to a query are all but impossible there)
        order = f"({distance}) + 0, m.id" if exact else distance
        # only vectors of the query's model (memories.spaces: a table holds one model, this says so to the reader)
        ctes.append(
            f"sem AS MATERIALIZED (SELECT m.id FROM {rows_sql} AS m WHERE m.owner_id = %s AND m.embedding IS NOT NULL "
            f"AND m.embedding_model = %s ORDER BY {order} LIMIT %s)"
        )
        params += [*rows_params, owner_id, model_of(vector), vector_text, nearest or k]
        sources.append("SELECT id, NULL::float8 AS score FROM sem")
    if lexemes:
        if subject_tf is not None:
            kw_ctes, kw_params, score, score_params = _subject_weighted_bm25(
                *(keyword_rows or (rows_sql, rows_params)), owner_id, lexemes, k1=k1, b=b, subject_tf=subject_tf,
                total=total, bounded=bounded)
        else:
            kw_ctes, kw_params, score, score_params = _positions_bm25(
                rows_sql, rows_params, owner_id, lexemes, k1=k1, b=b, table=table, total=total, bounded=bounded)
        ctes += kw_ctes
        # ties by id: many rows share a score (the same one common word), and which of them make the cut should not
        # depend on the plan
        ctes.append(f"kw AS MATERIALIZED ({score} ORDER BY score DESC, id LIMIT %s)")
        params += [*kw_params, *score_params, k]
        sources.append("SELECT id, score FROM kw")
    if not sources:
        return []
    similarity = (f"CASE WHEN m.embedding_model = %s THEN 1 - (m.embedding::{VECTOR} <=> %s::{VECTOR}) END"
                  if vector is not None else "NULL::float")
    extra = "".join(f", {column}" for column in columns)
    # the union carries each row's BM25 along (a join back to `kw` was a nested loop over both CTEs: 151 x 100
    # comparisons, 4 ms of an 8 ms statement at 419 memories)
    ctes.append(f"cand AS (SELECT id, max(score) AS score FROM ({' UNION ALL '.join(sources)}) AS u GROUP BY id)")
    select = (f"SELECT m.id, {similarity}, coalesce(cand.score, 0){extra} FROM cand JOIN {table} AS m "
              f"ON m.id = cand.id WHERE m.owner_id = %s")
    params += [model_of(vector), vector_text, owner_id] if vector is not None else [owner_id]
    if then is not None:
        ctes, select, params = then(ctes, select, params)
    cursor.execute(f"WITH {', '.join(ctes)} {select}", params)
    return cursor.fetchall()


def kind_similarities(cursor, owner_id: int, ids: list, groups: list) -> dict:
    """id -> (category, recorded attribute, each group's best cosine, or None) of the owner's memories `ids`,
    `groups` being lists of directions (the kind asked for, the kinds it does not hold): what a candidate needs for
    the intent boost and its `kin` (memories.search.intent), in one statement, each cosine as every other one here
    (halfvec)."""
    if not ids:
        return {}
    model = model_of(groups[0][0])
    best = ", ".join("GREATEST(" + ", ".join(f"1 - (m.embedding::{VECTOR} <=> %s::{VECTOR})" for _ in group) + ")"
                     for group in groups)
    cursor.execute(
        f"SELECT m.id, m.category, coalesce(m.metadata->>'attribute', ''), "
        f"CASE WHEN m.embedding_model = %s THEN ARRAY[{best}] END "
        f"FROM memories_memory AS m WHERE m.owner_id = %s AND m.id = ANY(%s::uuid[])",
        [model, *(HalfVector(list(d)).to_text() for group in groups for d in group), owner_id, list(ids)])
    return {row[0]: (row[1], row[2], tuple(row[3]) if row[3] is not None else None) for row in cursor.fetchall()}


PASSAGE_FIELDS = ("id", "owner_id", "embedding", "embedding_model", "search_vector")


def passage_candidates(cursor, *, base=None, rows: tuple[str, tuple] | None = None, table: str, owner_id: int,
                       vector, lexemes: list[str], k: int, k1: float, b: float, columns: tuple[str, ...] = (),
                       exact: bool = False, nearest: int | None = None, total: int | None = None,
                       bounded: tuple[list[int], int] | None = None) -> list[tuple]:
    """(id, cosine or None, BM25 share, *columns) of `candidates` for passages (document chunks, conversation
    messages), term frequencies from positions; `columns` are more expressions over the table (alias `m`). The
    rows are `base`'s, or `rows` (`rows_source(base, PASSAGE_FIELDS)`, compiled once by the caller); `exact`,
    `nearest`, `total` (N, else counted) and `bounded` as `candidates` says."""
    rows = candidates(cursor, base=base, fields=PASSAGE_FIELDS, rows=rows, table=table, owner_id=owner_id,
                      vector=vector, lexemes=lexemes, k=k, k1=k1, b=b, columns=columns, exact=exact,
                      nearest=nearest, total=total, bounded=bounded)
    return [(row[0], row[1], float(row[2] or 0.0), *row[3:]) for row in rows]
