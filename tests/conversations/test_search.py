"""Message search's two ways to its candidates (conversations/search.py): a small owner's exact scan gives what the
HNSW way gives, and a large owner's keyword side reads a bounded number of rows, the rarest words first (real
model, real PostgreSQL), and both read the same scope."""

import pytest
from django.core.cache import cache

from conversations import search, selectors
from conversations.models import Message
from memories.search import embed_query
from tests.conversations.test_selectors import converse
from tests.factories import ProjectFactory

QUERIES = ("What did Melanie paint?", "support group", "counseling next year", "swimming with the kids")


@pytest.fixture
def said(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return converse(user)


def _path(owner_id) -> str:
    from django.db import connection

    from memories.search.passages import passage_figures
    from memories.search.paths import vector_path

    with connection.cursor() as cursor:
        return vector_path(passage_figures(cursor, search.TABLE, owner_id))


def test_a_small_owner_gets_the_same_hits_by_exact_scan_as_through_the_index(said, user, settings):
    cache.clear()
    assert _path(user.pk) == "exact"
    exact = {q: [(h.id, round(h.score, 6)) for h in selectors.message_hits(owner=user, query=q)] for q in QUERIES}
    settings.SEARCH_EXACT_MAX_MEMORIES, settings.SEARCH_EXACT_MAX_SHARE = 0, 0.0
    cache.clear()
    assert _path(user.pk) == "shared"
    index = {q: [(h.id, round(h.score, 6)) for h in selectors.message_hits(owner=user, query=q)] for q in QUERIES}
    assert exact == index and all(exact.values())


def test_a_large_owners_keyword_side_reads_a_bounded_number_of_rows_rarest_words_first(user, settings, eager,
                                                                                       django_capture_on_commit_callbacks):
    common = [("user", "Ana", f"We went hiking on trail number {i} and it was lovely.") for i in range(12)]
    rare = [("user", "Ana", "We went hiking near the glacier and saw an ibex.")]
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, common + rare)
    settings.SEARCH_EXACT_MAX_MEMORIES, settings.SEARCH_EXACT_MAX_SHARE = 0, 0.0
    cache.clear()
    rows = search.message_rows(user.pk)

    def keyword_rows(bound):
        settings.SEARCH_KEYWORD_MAX_ROWS = bound
        cache.clear()  # the words' frequencies too
        found = search.message_candidates(user.pk, rows, "hiking ibex", None, k=100)
        return {row[0]: row[2] for row in found if row[2] > 0}

    everything, bounded = keyword_rows(0), keyword_rows(3)
    assert len(everything) == 13 and len(bounded) == 3
    best = max(everything, key=everything.get)
    assert max(bounded, key=bounded.get) == best  # the rows with every word (and the rarest) are read first
    # the scores of the rows read are the full ranking's: the words' frequencies are estimated, N is the owner's
    assert bounded[best] == pytest.approx(everything[best], rel=0.05)
    vector, _ = embed_query("hiking ibex", None, what="test")
    hits = selectors.message_hits(owner=user, query="hiking ibex", query_vector=vector)
    assert "ibex" in Message.objects.get(pk=hits[0].id).content


@pytest.mark.parametrize("large", [False, True])
def test_the_scope_is_seed_004s_on_both_paths(user, settings, eager, django_capture_on_commit_callbacks, large):
    if large:
        settings.SEARCH_EXACT_MAX_MEMORIES, settings.SEARCH_EXACT_MAX_SHARE = 0, 0.0
    mine, other = ProjectFactory(owner=user), ProjectFactory(owner=user)

    def found():
        cache.clear()
        hits = selectors.message_hits(owner=user, query="lighthouse keeper", project=project,
                                      all_projects=all_projects)
        return {Message.objects.get(pk=h.id).conversation_id for h in hits}

    with django_capture_on_commit_callbacks(execute=True):
        loose = converse(user, [("user", "Ana", "The lighthouse keeper waved at us.")])
    # no conversation in a project yet: every conversation is out of no project
    project, all_projects = None, False
    assert found() == {loose.pk}
    with django_capture_on_commit_callbacks(execute=True):
        in_mine = converse(user, [("user", "Ana", "Our lighthouse keeper retired.")], project=mine)
        in_other = converse(user, [("user", "Ana", "A lighthouse keeper lives alone.")], project=other)
    assert found() == {loose.pk}
    project = mine
    assert found() == {loose.pk, in_mine.pk}
    project, all_projects = None, True
    assert found() == {loose.pk, in_mine.pk, in_other.pk}
    assert _path(user.pk) == ("shared" if large else "exact")
