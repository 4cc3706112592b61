"""Embedding providers: the real local model, the OpenAI provider against a fake server over real HTTP, token
windows, the dimension check, and degradation when the endpoint is down."""

import logging
import random
import threading
import time

import numpy as np
import openai
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from integrations import embeddings, tokens
from memories import services
from tests.fakes.openai_server import fake_embedding

WORDS = (
    "river mountain library quietly orange telescope bicycle winter garden harbour lantern violin meadow "
    "whisper copper island thunder pencil marble forest engine blanket candle ribbon"
).split()


def prose(n_words: int, seed: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n_words)) + "."


def cosine(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(scope="module")
def local():
    """The real all-MiniLM-L6-v2, loaded once for this module."""
    provider = embeddings.LocalProvider(settings.EMBEDDING_MODEL, settings.EMBEDDING_BATCH_SIZE)
    provider.model  # noqa: B018 - load it now, not in the first test's timing
    return provider


# --- local provider ------------------------------------------------------------------------------------------


def test_local_vectors_are_384_dimensional_unit_vectors(local):
    vectors = local.embed(["I am allergic to peanuts", "The meeting moved to Thursday"])
    assert len(vectors) == 2
    for vector in vectors:
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_local_paraphrase_is_closer_than_an_unrelated_sentence(local):
    allergy, paraphrase, unrelated = local.embed(
        ["I am allergic to peanuts", "peanut allergy", "The train to Berlin leaves at noon"]
    )
    assert cosine(allergy, paraphrase) > cosine(allergy, unrelated) + 0.3


def test_local_batch_equals_single_calls(local):
    texts = ["Prefers window seats", "Lives in Lisbon with two cats", "short", prose(60, seed=1)]
    batch = local.embed(texts)
    for text, vector in zip(texts, batch, strict=True):
        assert np.allclose(local.embed([text])[0], vector, atol=1e-5)


def test_empty_input_embeds_nothing(local):
    assert local.embed([]) == []


# --- tokens and windows --------------------------------------------------------------------------------------


def test_count_tokens_matches_the_model_tokenizer(local):
    for text in ["Emma's birthday is on 3 March", "naïve café résumé", "supercalifragilistic", prose(80, seed=2),
                 "   ", "東京に住んでいる"]:
        expected = local.model.tokenizer(text, add_special_tokens=False)["input_ids"]
        assert embeddings.token_ids(text) == expected
        assert embeddings.count_tokens(text) == len(expected)


def test_counts_kept_and_in_batches_are_the_tokenizers(monkeypatch):
    monkeypatch.setattr(tokens, "COUNT_CACHE_SIZE", 3)  # a full cache starts again
    texts = ["Emma's birthday is on 3 March", "naïve café", prose(1200, seed=5), "Emma's birthday is on 3 March",
             "supercalifragilistic", "one more", "and another"]
    expected = [len(embeddings.token_ids(text)) for text in texts]
    assert embeddings.count_tokens_many(texts) == expected
    assert [embeddings.count_tokens(text) for text in texts] == expected == embeddings.count_tokens_many(texts)
    assert len(tokens._counts) <= 3 and texts[2] not in tokens._counts  # long texts are not kept


def test_short_text_is_one_window():
    text = prose(50, seed=3)
    assert embeddings.windows(text) == [text]


def test_long_text_is_split_into_overlapping_windows_that_cover_it():
    text = prose(1000, seed=4)  # one word piece per word
    assert embeddings.count_tokens(text) == 1001
    pieces = embeddings.windows(text)
    assert len(pieces) >= 4
    assert all(embeddings.count_tokens(piece) <= embeddings.WINDOW_TOKENS for piece in pieces)
    # every piece is a stretch of the text; together they cover it from start to end, each overlapping the last
    spans, cursor = [], 0
    for piece in pieces:
        start = text.find(piece, cursor)
        assert start >= 0
        spans.append((start, start + len(piece)))
        cursor = start + 1
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (_, previous_end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start < previous_end
    # windows begin and end on whole words
    assert all(piece.split()[0] in WORDS and piece.rstrip(".").split()[-1] in WORDS for piece in pieces)


def test_window_pieces_keep_their_word_pieces_and_fit_the_model():
    # long words split into many word pieces: a window must not start or end inside one
    text = " ".join(f"electroencephalography{i} photosynthesis{i}" for i in range(150))
    pieces = embeddings.windows(text)
    assert len(pieces) > 1
    whole = embeddings.tokenizer().encode(text, add_special_tokens=False).tokens
    for piece in pieces:
        tokens = embeddings.tokenizer().encode(piece, add_special_tokens=False).tokens
        assert len(tokens) <= embeddings.WINDOW_TOKENS
        assert not tokens[0].startswith("##")
        assert any(whole[i : i + len(tokens)] == tokens for i in range(len(whole)))


def test_text_beyond_the_first_window_changes_the_embedding(local):
    head = prose(300, seed=5)
    assert embeddings.count_tokens(head) > 256  # longer than the model reads at once
    first = local.embed([head + " " + prose(120, seed=6)])[0]
    second = local.embed([head + " " + prose(120, seed=7)])[0]
    assert not np.allclose(first, second, atol=1e-3)
    only_first_window = local.embed([embeddings.windows(head + " " + prose(120, seed=6))[0]])[0]
    assert not np.allclose(first, only_first_window, atol=1e-3)


# --- OpenAI-compatible provider against the fake server ------------------------------------------------------


def test_openai_vectors_come_back_in_order(openai_embeddings):
    openai_embeddings.reverse_order = True  # the server answers out of order; `index` says where each belongs
    texts = ["alpha", "beta", "gamma"]
    vectors = embeddings.embed_texts(texts)
    assert [len(v) for v in vectors] == [384, 384, 384]
    for text, vector in zip(texts, vectors, strict=True):
        assert np.allclose(vector, fake_embedding(text), atol=1e-6)


def test_openai_request_carries_model_key_and_inputs(openai_embeddings):
    embeddings.embed_text("Prefers tea over coffee")
    (request,) = openai_embeddings.requests_to("/embeddings")
    assert request.method == "POST"
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.json["model"] == "fake-embed"
    assert request.json["input"] == ["Prefers tea over coffee"]
    assert "dimensions" not in request.json  # only sent when EMBEDDING_SEND_DIMENSIONS is on


def test_openai_asks_for_the_configured_dimensions_when_told_to(openai_embeddings, settings, monkeypatch):
    openai_embeddings.dimensions = 1536  # the model's own size, e.g. text-embedding-3-small
    settings.EMBEDDING_SEND_DIMENSIONS = True
    monkeypatch.setattr(embeddings, "_provider", None)  # rebuilt from the changed settings
    assert len(embeddings.embed_text("hello")) == 384
    assert openai_embeddings.requests_to("/embeddings")[0].json["dimensions"] == 384


def test_openai_inputs_are_sent_in_batches(openai_embeddings, settings, monkeypatch):
    settings.EMBEDDING_BATCH_SIZE = 2
    monkeypatch.setattr(embeddings, "_provider", None)  # rebuilt from the changed settings
    texts = [f"text {i}" for i in range(5)]
    vectors = embeddings.embed_texts(texts)
    assert [r.json["input"] for r in openai_embeddings.requests_to("/embeddings")] == [
        ["text 0", "text 1"], ["text 2", "text 3"], ["text 4"],
    ]
    assert np.allclose(vectors[4], fake_embedding("text 4"), atol=1e-6)


def test_openai_long_input_is_windowed(openai_embeddings):
    text = prose(600, seed=8)
    (vector,) = embeddings.embed_texts([text])
    sent = openai_embeddings.embedding_inputs()
    assert len(sent) > 1 and sent == embeddings.windows(text)
    mean = np.mean([fake_embedding(piece) for piece in sent], axis=0)
    assert np.allclose(vector, mean / np.linalg.norm(mean), atol=1e-6)


def test_openai_server_error_raises_embedding_error(openai_embeddings):
    openai_embeddings.fail(500, times=None)
    with pytest.raises(embeddings.EmbeddingError) as error:
        embeddings.embed_text("anything")
    assert not isinstance(error.value, openai.OpenAIError)
    assert len(openai_embeddings.requests) == 2  # tried once more after a short pause


def test_openai_one_rate_limit_is_retried(openai_embeddings):
    openai_embeddings.fail(429, times=1)
    assert np.allclose(embeddings.embed_text("retry me"), fake_embedding("retry me"), atol=1e-6)
    assert len(openai_embeddings.requests) == 2


def test_openai_timeout_raises_embedding_error(openai_embeddings, settings, monkeypatch):
    settings.EMBEDDING_API_TIMEOUT = 0.3
    monkeypatch.setattr(embeddings, "_provider", None)  # rebuilt from the changed settings
    openai_embeddings.delay(5, times=None)
    with pytest.raises(embeddings.EmbeddingError, match="timed out"):
        embeddings.embed_text("slow")


def test_openai_timeout_is_waited_once(openai_embeddings, settings, monkeypatch):
    # a hanging provider cost every write and search twice the timeout: the client retried after timing out
    settings.EMBEDDING_API_TIMEOUT = 0.3
    monkeypatch.setattr(embeddings, "_provider", None)
    openai_embeddings.delay(5, times=None)
    with pytest.raises(embeddings.EmbeddingError, match="timed out"):
        embeddings.embed_text("slow")
    assert len(openai_embeddings.requests_to("/embeddings")) == 1


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0])
def test_openai_vectors_that_are_not_numbers_raise_embedding_error(openai_embeddings, value):
    openai_embeddings.bad_values(value)
    with pytest.raises(embeddings.EmbeddingError, match="NaN, infinite or all-zero"):
        embeddings.embed_texts(["hello", "world"])


def test_openai_wrong_dimensions_raise_embedding_error(openai_embeddings):
    openai_embeddings.wrong_dimensions(1536)
    with pytest.raises(embeddings.EmbeddingError) as error:
        embeddings.embed_text("hello")
    assert "1536 dimensions" in str(error.value) and "EMBEDDING_DIMENSIONS is 384" in str(error.value)


def test_openai_malformed_body_raises_embedding_error(openai_embeddings):
    openai_embeddings.malformed(times=None)
    with pytest.raises(embeddings.EmbeddingError):
        embeddings.embed_text("hello")


def test_openai_wrong_key_raises_embedding_error(openai_embeddings):
    openai_embeddings.require_api_key("another-key")
    with pytest.raises(embeddings.EmbeddingError):
        embeddings.embed_text("hello")


# --- circuit breaker ---------------------------------------------------------------------------------------


@pytest.fixture
def breaker(openai_embeddings, settings, monkeypatch):
    """The fake server's provider with a breaker that opens after 3 failed calls for 0.5 s."""
    settings.EMBEDDING_CIRCUIT_FAILURES = 3
    settings.EMBEDDING_CIRCUIT_COOLOFF = 0.5
    monkeypatch.setattr(embeddings, "_provider", None)
    return openai_embeddings


def _failing_calls(n: int) -> None:
    for _ in range(n):
        with pytest.raises(embeddings.EmbeddingError):
            embeddings.embed_text("anything")


def test_the_circuit_opens_after_failures_in_a_row_and_the_provider_is_left_alone(breaker, settings):
    settings.EMBEDDING_CIRCUIT_COOLOFF = 600.0  # still open at the next call, however slow the machine
    breaker.fail(500, times=None)
    _failing_calls(3)
    assert len(breaker.requests) == 6  # each call tried twice
    with pytest.raises(embeddings.EmbeddingError, match="not called"):
        embeddings.embed_text("anything")
    assert len(breaker.requests) == 6


def test_a_success_between_failures_keeps_the_circuit_closed(breaker):
    breaker.fail(500, times=4)  # two calls fail
    _failing_calls(2)
    embeddings.embed_text("fine")
    breaker.fail(500, times=4)
    _failing_calls(2)
    assert embeddings.get_provider().breaker.closed


def test_after_the_cooloff_one_trial_call_closes_the_circuit(breaker):
    breaker.fail(500, times=6)
    _failing_calls(3)
    assert embeddings.get_provider().breaker.opened
    time.sleep(0.6)  # the cool-off
    assert np.allclose(embeddings.embed_text("back"), fake_embedding("back"), atol=1e-6)
    assert embeddings.get_provider().breaker.closed


def test_while_the_trial_call_hangs_other_calls_fail_at_once(breaker, settings):
    settings.EMBEDDING_API_TIMEOUT = 600.0  # the trial hangs until released, however slow the machine
    breaker.fail(500, times=6)
    _failing_calls(3)
    time.sleep(0.6)  # the cool-off
    breaker.delay(600.0, times=1)
    trial = threading.Thread(target=embeddings.embed_text, args=["trial"])
    trial.start()
    try:
        deadline = time.monotonic() + 600
        while len(breaker.requests) < 7 and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(embeddings.EmbeddingError, match="tried again"):
            embeddings.embed_text("meanwhile")
        assert len(breaker.requests) == 7  # the trial's request only
    finally:
        breaker.release()
        trial.join()
    assert embeddings.get_provider().breaker.closed


# --- dimension check -----------------------------------------------------------------------------------------


def test_check_refuses_dimensions_that_do_not_fit_the_column(settings):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_DIMENSIONS = 1536
    with pytest.raises(SystemCheckError) as error:
        call_command("check")
    assert "vector(384)" in str(error.value) and "EMBEDDING_DIMENSIONS" in str(error.value)
    assert "memento.E001" in str(error.value)
    assert "vector(384)" in embeddings.dimension_problem(column=384)  # the check passes the column (memories)


def test_check_refuses_other_dimensions_for_the_local_model(settings):
    settings.EMBEDDING_DIMENSIONS = 512
    with pytest.raises(SystemCheckError, match="EMBEDDING_DIMENSIONS is 512"):
        call_command("check")
    with pytest.raises(ImproperlyConfigured):
        embeddings.build_provider()


def test_check_refuses_an_unknown_provider(settings):
    settings.EMBEDDING_PROVIDER = "cohere"
    with pytest.raises(SystemCheckError, match="EMBEDDING_PROVIDER"):
        call_command("check")


def test_check_passes_with_default_settings():
    call_command("check")
    assert embeddings.dimension_problem() is None


# --- degradation ---------------------------------------------------------------------------------------------


def test_memory_is_stored_pending_when_the_endpoint_is_down(openai_embeddings, user, caplog):
    openai_embeddings.fail(500, times=None)
    with caplog.at_level(logging.WARNING, logger="memories.services"):
        write = services.memory_create(owner=user, content="Allergic to penicillin", actor=user)
    assert write.outcome == "created"
    write.memory.refresh_from_db()
    assert write.memory.embedding is None and write.memory.embedding_model == ""
    assert write.memory.history.get().history_action == "CREATE"
    assert openai_embeddings.requests_to("/embeddings")
    assert "embedding pending" in caplog.text


@pytest.mark.parametrize("fault", ["nan", "hang", "error"])
def test_api_writes_land_pending_and_searches_degrade_when_the_provider_misbehaves(openai_embeddings, settings,
                                                                                  monkeypatch, api, fault):
    settings.EMBEDDING_API_TIMEOUT = 0.3
    settings.EMBEDDING_CIRCUIT_FAILURES = 2
    monkeypatch.setattr(embeddings, "_provider", None)
    {"nan": lambda: openai_embeddings.bad_values(float("nan")), "hang": lambda: openai_embeddings.delay(5, times=None),
     "error": lambda: openai_embeddings.fail(503, times=None)}[fault]()
    for i in range(3):
        response = api.post("/api/memories/", {"content": f"Allergic to penicillin {i}"}, format="json")
        assert response.status_code == 201, response.content
        assert response.json()["embedding_pending"] is True
    calls = len(openai_embeddings.requests_to("/embeddings"))
    search = api.post("/api/memories/search/", {"query": "penicillin"}, format="json")
    assert search.status_code == 200, search.content
    assert search.json()["degraded"] is True and len(search.json()["results"]) == 3
    # the circuit opened after two failed writes: the third write and the search did not call the provider
    assert len(openai_embeddings.requests_to("/embeddings")) == calls
    assert calls == 2  # (0.3 s leaves no time for a retry after an error)


def test_memory_is_embedded_by_the_endpoint_when_it_is_up(openai_embeddings, user):
    memory = services.memory_create(owner=user, content="Allergic to penicillin", actor=user).memory
    memory.refresh_from_db()
    assert memory.embedding_model == "fake-embed"
    assert np.allclose(memory.embedding, fake_embedding("Allergic to penicillin"), atol=1e-6)


# --- the fake server's chat endpoint, for the extractor's tests ----------------------------------------------


def test_fake_chat_completions_answer_scripted_replies(openai_server):
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    openai_server.reply('{"memories": []}', lambda request: f"{len(request['messages'])} messages")
    ask = [{"role": "user", "content": "hi"}]
    first = client.chat.completions.create(model="fake-llm", messages=ask)
    second = client.chat.completions.create(model="fake-llm", messages=ask * 2)
    third = client.chat.completions.create(model="fake-llm", messages=ask)
    assert [first.choices[0].message.content, second.choices[0].message.content,
            third.choices[0].message.content] == ['{"memories": []}', "2 messages", "{}"]
    assert first.model == "fake-llm" and first.choices[0].finish_reason == "stop"
    assert openai_server.requests_to("/chat/completions")[1].json["messages"] == ask * 2
    openai_server.fail(503, times=1, endpoint="/chat/completions")
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="fake-llm", messages=ask)
