"""Knowledge updates: does the newest value end current, and does nothing that should stay true get retired?

    python bench/knowledge_updates.py [--set bench/sets/knowledge_updates.json] [--verbose]

Each case of the set (written for this bench, see its "about") is a new user and one conversation of two user
turns, months apart, posted through the real conversations API (POST /api/conversations/, .../messages/ with
sent_at) and extracted by the real pipeline (the local extractor, attribute frames, memories_reconcile; the
worker's unit of work, run in this process in send order), then read back through GET /api/memories/ (what is
current) and the supersession chain. Figures:
- updates resolved: a current memory holds the new value, no current memory holds only the old one, and the old
  one is superseded with valid_to set;
- context without stale lines: the context an agent gets for a question about the attribute (GET
  /api/conversations/<id>/context/?query=...; QUESTIONS below) holds the new value, and every line that names the
  old value without the new one is marked as no longer true;
- wrong retirements: a coexisting pair in which anything was superseded;
- beside them, the cases in which the extractor never stored the old statement (nothing to supersede).
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import progress, setup_django, wipe_users  # noqa: E402

DATABASE = "memento_bench_updates"
USER = "bench-updates-"
SET = Path(__file__).resolve().parent / "sets" / "knowledge_updates.json"
OLD_AT, NEW_AT = "2024-02-12T09:30:00Z", "2024-07-03T18:15:00Z"
# what an agent would ask about each attribute of the set
QUESTIONS = {
    "home": "where does the user live?", "employer": "where does the user work?",
    "job title": "what is the user's job?", "manager": "who is the user's manager?",
    "car": "what car does the user drive?", "diet": "what does the user eat?",
    "favourite": "what is the user's favourite?", "partner": "who is the user's partner?",
    "phone": "what is the user's phone number?", "email": "what is the user's email address?",
    "phone model": "what phone does the user have?", "age": "how old is the user?",
    "school": "where does the user study?", "relationship status": "is the user in a relationship?",
    "preferred name": "what should I call the user?", "name": "what is the user's name?",
    "workplace": "where is the user's office?", "work phone": "what is the user's work phone number?",
    "work email": "what is the user's work email address?", "gym": "which gym does the user go to?",
}


def run_case(api_for, index: int, turns: list[str], question: str = "") -> tuple[list[dict], list, str]:
    """Post `turns` as one conversation of a new user, extract them, return (current memories, all memories, the
    context's text for `question`)."""
    from django.contrib.auth import get_user_model

    from conversations import processing
    from conversations.models import Message
    from memories.models import Memory

    user = get_user_model().objects.create(username=f"{USER}{index}")
    api = api_for(user)
    cid = api.post("/api/conversations/", {"title": "bench"}, format="json").json()["id"]
    response = api.post(f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "content": text, "sent_at": at} for text, at in zip(turns, (OLD_AT, NEW_AT), strict=False)
    ]}, format="json")
    assert response.status_code == 201, response.content
    for message in Message.objects.filter(conversation_id=cid).order_by("sent_at", "sequence"):
        processing.message_extract(message_id=message.pk)
    live = api.get("/api/memories/", {"page_size": 200}).json()["results"]
    context = api.get(f"/api/conversations/{cid}/context/", {"query": question}).json()["text"] if question else ""
    return live, list(Memory.objects.filter(owner=user)), context


def stale_lines(context: str, old: str, new: str) -> list[str]:
    """The context's lines that name the old value, not the new one, and are not marked as no longer true."""
    return [line for line in context.splitlines()
            if has(line, old) and not has(line, new) and "no longer true" not in line]


def has(text: str, word: str) -> bool:
    return word.lower() in text.lower()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=SET)
    parser.add_argument("--verbose", action="store_true", help="print every case that failed")
    args = parser.parse_args()
    setup_django(DATABASE)
    from django.conf import settings
    from rest_framework.test import APIClient

    from accounts.services import token_create

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    cases = json.loads(args.set.read_text())
    wipe_users(USER)

    def api_for(user):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user, name='bench').key}")
        return client

    started = time.perf_counter()
    resolved, not_extracted, stale_left, old_missing, failures = 0, 0, 0, 0, []
    context_clean = 0
    for i, case in enumerate(progress(cases["updates"], desc="updates")):
        live, everything, context = run_case(api_for, i, [case["old"], case["new"]], QUESTIONS[case["attribute"]])
        stale = stale_lines(context, case["old_value"], case["new_value"])
        clean = has(context, case["new_value"]) and not stale
        context_clean += clean
        if not clean:
            failures.append(("context", case["attribute"], case["old"], case["new"], context.splitlines()))
        texts = [m["content"] for m in live]
        new_current = any(has(t, case["new_value"]) for t in texts)
        old_only = [t for t in texts if has(t, case["old_value"]) and not has(t, case["new_value"])]
        retired = [m for m in everything if m.superseded_by_id and m.valid_to and has(m.content, case["old_value"])]
        ok = new_current and not old_only and bool(retired)
        resolved += ok
        stale_left += bool(old_only)
        not_extracted += not new_current
        old_missing += not any(has(m.content, case["old_value"]) for m in everything)
        if not ok:
            failures.append(("update", case["attribute"], case["old"], case["new"], texts))
    wrong = 0
    for i, case in enumerate(progress(cases["coexist"], desc="coexist")):
        # after every update's user: the sets hold more than a thousand updates
        live, everything, _ = run_case(api_for, len(cases["updates"]) + i, [case["first"], case["second"]])
        retired = [m.content for m in everything if m.superseded_by_id]
        if retired:
            wrong += 1
            failures.append(("coexist", case["kind"], case["first"], case["second"], retired))
    wipe_users(USER)
    updates, pairs = len(cases["updates"]), len(cases["coexist"])
    print(f"set: {args.set.name} ({updates} updates, {pairs} coexisting pairs), {time.perf_counter() - started:.0f} s")
    print(f"updates resolved: {resolved}/{updates} ({resolved / updates:.1%}); old value still current: "
          f"{stale_left}; new value not stored: {not_extracted}; old value never stored: {old_missing}")
    stored = updates - old_missing
    print(f"resolved where the extractor stored the old value: {resolved}/{stored} ({resolved / max(stored, 1):.1%})")
    print(f"context with the new value and no unmarked stale line: {context_clean}/{updates} "
          f"({context_clean / updates:.1%})")
    print(f"wrong retirements: {wrong}/{pairs} ({wrong / pairs:.1%})")
    if args.verbose:
        for failure in failures:
            print(" | ".join(str(part) for part in failure))


if __name__ == "__main__":
    main()
