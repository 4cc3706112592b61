"""The owners bench/context_latency.py times, loaded into its database (memento_bench_context), each with the
questions it is asked:

- `locomo`: one LoCoMo conversation (../shared/bench/locomo10.json, ~600 turns) for one of its speakers, through
  conversations.services (appended, embedded as the worker would), the speaker's LoCoMo observations as memories;
  asked that conversation's questions.
- `lme-N`: LongMemEval S haystacks (../shared/bench/longmemeval/, ~500 turns in ~50 sessions each), loaded by
  bench/longmemeval_context.py's own loader (embedded, every user turn extracted inline); asked the S subset's
  questions.
- `gen-10k`, `gen-100k`: generated owners of that many messages in conversations of 100 turns over two years. Each
  message is two LoCoMo turns (of any conversation) said together, its vector the normalised sum of theirs (the
  turns are embedded once, not the 100,000 messages), inserted in bulk; 1,000 LoCoMo observations as memories.
  Asked every LoCoMo question.

Every owner's embedded messages get their outline (conversations.excerpts.outline) as the embedding worker gives
it: owners loaded before outlines existed, and the generated owners' bulk inserts, have none otherwise.

Nothing is copied into the repository: the files are read where they are.
"""

import json
import random
from datetime import UTC, datetime, timedelta

from bench.common import ROOT, progress, wipe_users
from bench.locomo_recall import DEFAULT_PATH, load_dataset

PREFIX = "ctx-latency-"
APPEND_MAX = 500
GENERATED_TURNS = 100  # per conversation
GENERATED_MEMORIES = 1000
BULK = 2000


def _user(name: str, reuse: bool, messages: int):
    """(user, True) when `reuse` and the user holds `messages` messages, else a new empty user and False."""
    from django.contrib.auth import get_user_model

    from conversations.models import Message
    from core import rls

    User = get_user_model()
    user = User.objects.filter(username=name).first()
    if user is not None and reuse:
        rls.activate(user.pk)
        if Message.objects.filter(owner=user).count() == messages:
            return user, True
    if user is not None:
        wipe_users(name)
    user = User.objects.create(username=name)
    rls.activate(user.pk)
    return user, False


def _memories(user, facts: list[str]) -> None:
    from django.conf import settings

    from memories.batch import memory_batch_create

    items = [{"content": text} for text in facts]
    for i in range(0, len(items), settings.MEMORY_BATCH_MAX):
        memory_batch_create(owner=user, items=items[i:i + settings.MEMORY_BATCH_MAX])


def locomo_owner(sample_index: int, *, reuse: bool):
    """(user, questions) for LoCoMo sample `sample_index`'s first speaker."""
    from bench.locomo_conversations import observations
    from conversations import processing, services
    from conversations.models import Conversation
    from core import rls

    sample = json.loads(DEFAULT_PATH.read_text())[sample_index]
    turns, questions, _ = load_dataset(DEFAULT_PATH)
    mine = turns[sample["sample_id"]]
    asked = [q.text for q in questions if q.sample_id == sample["sample_id"]]
    speaker = sample["conversation"]["speaker_a"]
    user, kept = _user(f"{PREFIX}{sample['sample_id']}", reuse, len(mine))
    if kept:
        return user, asked
    queued: list[list[str]] = []
    services._send_embedding = lambda ids, extract: queued.append(ids)  # embedded below, not by a worker
    conversation = Conversation.objects.create(owner=user, title=sample["sample_id"])
    messages = [{"role": "user" if t.speaker == speaker else "assistant", "name": t.speaker, "content": t.text,
                 "client_message_id": t.dia_id, "sent_at": t.happened_at + timedelta(seconds=i)}
                for i, t in enumerate(mine)]
    for i in range(0, len(messages), APPEND_MAX):
        services.messages_append(conversation=conversation, messages=messages[i:i + APPEND_MAX])
    rls.activate(None, bypass=True)  # the worker's view
    for ids in queued:
        processing.messages_embed(message_ids=ids)
    rls.activate(user.pk)
    _memories(user, [text for who, text, _ in observations(sample) if who == speaker])
    return user, asked


def longmemeval_owners(count: int, *, reuse: bool) -> list[tuple[str, object, list[str]]]:
    """(name, user, questions) of the first `count` LongMemEval S haystacks (knowledge-update and temporal
    questions), each asked every question of the S subset."""
    from bench import longmemeval_context as lme

    chosen = lme.questions(lme.DATA, "s", None)[:count]
    users = lme.load(chosen, tag="s", reuse=reuse)
    asked = [q["question"] for q in json.loads((lme.DATA / lme.SUBSET).read_text())]
    return [(f"lme-{i + 1}", users[q["question_id"]], asked) for i, q in enumerate(chosen)]


def _turn_vectors(texts: list[str]):
    """The turns' vectors, kept in .memento/ (outside the repository) after the first time: embedding the 5,900
    LoCoMo turns takes minutes on a loaded machine."""
    import hashlib

    import numpy as np

    from integrations.embeddings import get_provider

    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = ROOT / ".memento" / f"bench-turn-vectors-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.array(get_provider().embed(texts), dtype=np.float32)
    np.save(path, vectors)
    return vectors


def generated_owner(messages: int, *, reuse: bool):
    """(user, questions) of a generated owner with `messages` messages (see the module's docstring)."""
    import numpy as np

    from bench.locomo_conversations import observations
    from conversations.models import Conversation, Message

    turns, questions, _ = load_dataset(DEFAULT_PATH)
    asked = [q.text for q in questions]
    user, kept = _user(f"{PREFIX}gen-{messages}", reuse, messages)
    if kept:
        return user, asked
    pool = [t for sample in turns.values() for t in sample]
    vectors = _turn_vectors([f"{t.speaker}: {t.text}" for t in pool])
    rng = random.Random(messages)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    step = timedelta(days=730) / messages
    for first in progress(range(0, messages, GENERATED_TURNS), desc=f"generating {messages} messages"):
        conversation = Conversation.objects.create(owner=user, title=f"generated {first // GENERATED_TURNS + 1}")
        rows = []
        for seq in range(1, min(GENERATED_TURNS, messages - first) + 1):
            a, b = rng.randrange(len(pool)), rng.randrange(len(pool))
            vector = vectors[a] + vectors[b]
            rows.append(Message(
                conversation=conversation, owner=user, role="user" if seq % 2 else "assistant",
                name=pool[a].speaker, content=f"{pool[a].text} {pool[b].text}", sequence=seq,
                sent_at=start + step * (first + seq), embedding=(vector / np.linalg.norm(vector)).tolist(),
                embedding_model="all-MiniLM-L6-v2", extraction_status=Message.Extraction.SKIPPED))
        Message.objects.bulk_create(rows, batch_size=BULK)
    samples = json.loads(DEFAULT_PATH.read_text())
    facts = [text for sample in samples for _, text, _ in observations(sample)]
    _memories(user, random.Random(7).sample(facts, min(GENERATED_MEMORIES, len(facts))))
    return user, asked


def outlined(user) -> int:
    """Work out the outline (conversations.excerpts.outline) of the owner's embedded messages that have none, as
    the embedding worker does: messages loaded before outlines existed, or inserted in bulk here. Returns how many."""
    from conversations.excerpts import outline
    from conversations.models import Message
    from core import rls

    rls.activate(user.pk)
    missing = list(Message.objects.filter(owner=user, outline__isnull=True, embedding__isnull=False)
                   .only("id", "content"))
    for message in progress(missing, desc="outlines") if len(missing) > BULK else missing:
        message.outline = outline(message.content)
    Message.objects.bulk_update(missing, ["outline"], batch_size=BULK)
    return len(missing)


def owners(names: list[str], *, reuse: bool, sample: int, lme: int) -> list[tuple[str, object, list[str]]]:
    """(name, user, questions) of each owner named: locomo, lme, gen-10k, gen-100k; their messages outlined."""
    found = []
    for name in names:
        if name == "locomo":
            found.append((f"locomo (sample {sample})", *locomo_owner(sample, reuse=reuse)))
        elif name == "lme":
            found += longmemeval_owners(lme, reuse=reuse)
        elif name.startswith("gen-"):
            count = int(name[4:].replace("k", "000"))
            found.append((name, *generated_owner(count, reuse=reuse)))
        else:
            raise SystemExit(f"unknown owner {name!r}: locomo, lme, gen-10k or gen-100k")
    if sum(outlined(user) for _, user, _ in found):
        _analyze()
    return found


def _analyze() -> None:
    """Fresh statistics for the tables just loaded: before autovacuum's analyze comes round (a minute or more),
    the planner took a new generated owner's 100 conversations for one and joined them to every matching message
    in turn (message search ~190 ms instead of ~30 at 10,000 messages), a bench artefact."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("conversations_conversation", "conversations_message", "memories_memory"):
            cursor.execute(f"ANALYZE {table}")
