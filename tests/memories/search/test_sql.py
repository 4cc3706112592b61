"""The candidate SQL: a keyword match reads only the searching user's full-text index entries, so how long it
takes cannot tell what words other users have (the timing side channel: bench/fts_side_channel.py)."""

import math
import os

import pytest
from django.core.cache import cache
from django.db import connection, transaction

from core import rls
from memories.models import Memory
from memories.search import sql
from tests.factories import ChunkFactory, DocumentFactory, MemoryFactory, MessageFactory

pytestmark = pytest.mark.skipif("DATABASE_URL" in os.environ,
                                reason="the embedded server declares the index function LEAKPROOF")


def keyword_plan(owner, base, table: str, word: str) -> str:
    """The plan of `candidates`' statement for a keyword-only search, as `owner`'s request runs it."""
    captured = []

    def capture(execute, statement, params, many, context):
        captured.append((statement, params))
        return execute(statement, params, many, context)

    with rls.as_user(owner.pk), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a handful of rows would otherwise be read in full
        cursor.execute("SET LOCAL enable_indexscan = off")  # nor through the owner's btree
        with connection.execute_wrapper(capture):
            sql.candidates(cursor, base=base, fields=("id", "owner_id", "embedding", "search_vector"), table=table,
                           owner_id=owner.pk, vector=None, lexemes=[word], k=10, k1=1.2, b=0.75, subject_tf=2.0,
                           total=10)
        statement, params = captured[-1]
        cursor.execute(f"EXPLAIN {statement}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_keyword_match_reads_only_the_owners_index_entries(user, other_user):
    # enough rows of each that the planner prefers a full-text index to reading all the owner's rows
    Memory.objects.bulk_create([Memory(owner=user, content=f"Plans trip {i}", key=f"k{i}", indexed=False)
                                for i in range(500)])
    Memory.objects.bulk_create([Memory(owner=other_user, content="Flew to Zanzibar", key=f"k{i}", indexed=False)
                                for i in range(500)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    plan = keyword_plan(user, Memory.objects.filter(owner=user), "memories_memory", "zanzibar")
    conditions = [line.strip() for line in plan.splitlines() if "Index Cond" in line and "@@" in line]
    assert conditions == [f"Index Cond: (memento_owner_lexemes((owner_id)::bigint, search_vector) @@ "
                          f"'''{user.pk}:zanzibar'''::tsquery)"], plan


def test_the_owners_words_are_found_and_nobody_elses(user, other_user):
    mine = MemoryFactory(owner=user, content="Flew to Zanzibar in May")
    MemoryFactory(owner=other_user, content="Flew to Zanzibar again")
    with rls.as_user(user.pk), transaction.atomic(), connection.cursor() as cursor:
        rows = sql.candidates(cursor, base=Memory.objects.filter(owner=user),
                              fields=("id", "owner_id", "embedding", "search_vector"), table="memories_memory",
                              owner_id=user.pk, vector=None, lexemes=["zanzibar"], k=10, k1=1.2, b=0.75,
                              subject_tf=2.0, total=1)
    assert [row[0] for row in rows] == [mine.pk]


@pytest.mark.parametrize("table", ["documents_chunk", "conversations_message"])
def test_passages_are_matched_by_the_owners_index_entries_too(user, other_user, table):
    from conversations.models import Message
    from documents.models import Chunk

    if table == "documents_chunk":
        mine = ChunkFactory(document=DocumentFactory(owner=user), content="Zanzibar spice tour")
        ChunkFactory(document=DocumentFactory(owner=other_user), content="Zanzibar spice tour")
        model = Chunk
    else:
        mine = MessageFactory(conversation__owner=user, content="Zanzibar spice tour")
        MessageFactory(conversation__owner=other_user, content="Zanzibar spice tour")
        model = Message
    statements = []
    with rls.as_user(user.pk), transaction.atomic(), connection.cursor() as cursor:
        with connection.execute_wrapper(lambda execute, statement, *rest: statements.append(statement)
                                        or execute(statement, *rest)):
            rows = sql.passage_candidates(cursor, base=model.objects.filter(owner=user), table=table,
                                          owner_id=user.pk, vector=None, lexemes=["zanzibar"], k=10, k1=1.2, b=0.75)
    assert [row[0] for row in rows] == [mine.pk]
    assert "memento_owner_lexemes(m.owner_id, m.search_vector) @@" in statements[-1]


def test_bounded_tiers_read_every_word_first_then_the_rarest_words_each_row_once():
    tiers = sql.bounded_tiers(7, ["beta", "alpha", "gamma", "absent"], [35, 5, 25, 0])
    assert tiers == [
        ("'7:alpha' & '7:gamma' & '7:beta'", "'alpha' & 'gamma' & 'beta'"),
        ("'7:alpha' & !('7:alpha' & '7:gamma' & '7:beta')", "'alpha' & !('alpha' & 'gamma' & 'beta')"),
        ("'7:gamma' & !('7:alpha' & '7:gamma' & '7:beta') & !'7:alpha'",
         "'gamma' & !('alpha' & 'gamma' & 'beta') & !'alpha'"),
        ("'7:beta' & !('7:alpha' & '7:gamma' & '7:beta') & !'7:alpha' & !'7:gamma'",
         "'beta' & !('alpha' & 'gamma' & 'beta') & !'alpha' & !'gamma'"),
    ]
    assert sql.bounded_tiers(7, ["beta", "absent"], [35, 0]) == [("'7:beta'", "'beta'")]


@pytest.fixture
def large_owner(user, settings):
    """A large owner as search sees it (the exact path is for owners of up to 0 memories), with 5 memories holding
    'alpha' and 'beta', 25 'gamma', 30 'beta' alone, and another user's rows with all three words."""
    settings.SEARCH_EXACT_MAX_MEMORIES = 0
    settings.SEARCH_EXACT_MAX_SHARE = 0.0
    # as many words in each (BM25's lengths alike: the bound changes no score)
    texts = ([f"alpha beta note {i}" for i in range(5)] + [f"gamma note extra {i}" for i in range(25)]
             + [f"beta note extra {i}" for i in range(30)])
    Memory.objects.bulk_create([Memory(owner=user, content=text, key=f"k{i}", indexed=False)
                                for i, text in enumerate(texts)])
    other = MemoryFactory().owner
    Memory.objects.bulk_create([Memory(owner=other, content=f"alpha beta gamma {i}", key=f"o{i}", indexed=False)
                                for i in range(40)])
    return user


def keyword_search(owner, query, limit=60):
    from memories.search import memory_search

    with rls.as_user(owner.pk):
        return [(r.memory.content, round(r.score, 9))
                for r in memory_search(owner=owner, query=query, mode="keyword", limit=limit).results]


def test_a_large_owners_bounded_keyword_side_ranks_as_the_full_one_when_it_reads_every_match(large_owner,
                                                                                              settings):
    settings.SEARCH_KEYWORD_MAX_ROWS = 0  # no bound
    full = keyword_search(large_owner, "alpha beta gamma")
    assert len(full) == 60
    settings.SEARCH_KEYWORD_MAX_ROWS = 60  # a bound (the words' frequencies add up to 65), which every match fits
    captured = []

    def capture(execute, statement, params, many, context):
        captured.append(statement)
        return execute(statement, params, many, context)

    with connection.execute_wrapper(capture):
        assert keyword_search(large_owner, "alpha beta gamma") == full  # the same rows, the same scores
    assert any("UNION ALL" in statement and "owner_id + 0" in statement for statement in captured)


def test_a_large_owners_bounded_keyword_side_reads_the_rows_with_the_rarest_words_first(large_owner, settings):
    settings.SEARCH_KEYWORD_MAX_ROWS = 12
    found = keyword_search(large_owner, "alpha beta gamma")
    assert len(found) == 12
    # every 'alpha' row (the rarest word, with 'beta' too: the best), then 'gamma' rows; no row with 'beta' alone
    assert {content for content, _ in found[:5]} == {f"alpha beta note {i}" for i in range(5)}
    assert all(content.startswith("gamma") for content, _ in found[5:])
    # the scores are the full ranking's (the frequencies are the owner's, not those among the rows read)
    settings.SEARCH_KEYWORD_MAX_ROWS = 0
    full = dict(keyword_search(large_owner, "alpha beta gamma"))
    assert all(full[content] == score for content, score in found)


def test_word_frequencies_are_estimated_from_the_newest_rows_and_counted_for_rare_words(large_owner, monkeypatch):
    monkeypatch.setattr(sql, "FREQUENCY_SAMPLE", 20)  # the 20 newest: 'beta note extra' rows
    monkeypatch.setattr(sql, "FREQUENCY_EXACT_BELOW", 3)
    with rls.as_user(large_owner.pk), connection.cursor() as cursor:
        # beta: 20 of 20 sampled, so 60 of 60 estimated (35 in truth); alpha and gamma are not in the sample: counted
        assert sql.word_frequencies(cursor, large_owner.pk, ["beta", "alpha", "gamma", "absent"], total=60) == [
            60, 5, 25, 0]
        monkeypatch.setattr(sql, "FREQUENCY_SAMPLE", 1000)  # more than the owner has: every word counted
        assert sql.word_frequencies(cursor, large_owner.pk, ["alpha"], total=60) == [5]  # reused for a while
        cache.clear()
        assert sql.word_frequencies(cursor, large_owner.pk, ["beta"], total=60) == [35]


def test_passage_bm25_counts_each_words_occurrences_as_the_formula_says(user, other_user):
    """Passage BM25 (term frequencies from the tsvector's positions) against the formula worked out here from the
    stored tsvectors: the same rows in the same order with the same scores."""
    from conversations.models import Message

    texts = ["Zanzibar spice tour: the spice market, then more spice", "a spice tour", "our tour of Zanzibar",
             "Zanzibar, Zanzibar and Zanzibar again", "nothing to do with it", "tour tour tour of the old town"]
    for text in texts:
        MessageFactory(conversation__owner=user, content=text)
    MessageFactory(conversation__owner=other_user, content="spice spice spice tour of Zanzibar")
    lexemes, k1, b = ["spice", "tour", "zanzibar"], 1.2, 0.4
    with rls.as_user(user.pk), transaction.atomic(), connection.cursor() as cursor:
        rows = sql.passage_candidates(cursor, base=Message.objects.filter(owner=user), table="conversations_message",
                                      owner_id=user.pk, vector=None, lexemes=lexemes, k=10, k1=k1, b=b)
        cursor.execute("SELECT m.id, u.lexeme, cardinality(u.positions), length(m.search_vector) "
                       "FROM conversations_message AS m, unnest(m.search_vector) AS u WHERE m.owner_id = %s",
                       [user.pk])
        stored = cursor.fetchall()
    tf, length = {}, {}
    for row_id, lexeme, positions, dl in stored:
        tf[(row_id, lexeme)] = positions
        length[row_id] = dl
    matching = {row_id for (row_id, lexeme) in tf if lexeme in lexemes}
    avgdl = max(sum(length[i] for i in matching) / len(matching), 1)
    idf = {w: math.log(1 + (len(length) - n + 0.5) / (n + 0.5))
           for w in lexemes for n in [sum((i, w) in tf for i in matching)]}
    norm = {i: k1 * (1 - b + b * length[i] / avgdl) for i in matching}
    expected = {i: sum(idf[w] * tf.get((i, w), 0) * (k1 + 1) / (tf.get((i, w), 0) + norm[i]) for w in lexemes)
                / sum(idf.values()) for i in matching}
    order = sorted(expected, key=lambda i: (-expected[i], str(i)))
    assert [row[0] for row in sorted(rows, key=lambda r: (-r[2], str(r[0])))] == order
    assert len(order) == 5
    for row_id, _, score in rows:
        assert score == pytest.approx(expected[row_id], rel=1e-9)
