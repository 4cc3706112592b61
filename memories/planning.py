"""How reconciliation decides one candidate (memories.reconcile writes what is decided): by its attribute frames
against the owner's live memories of the same holder and attribute, and by valid time, so that a statement about
an older time than the current memory's enters its chain as the past."""

import re
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from core.calendar_words import MONTH_ABBREVIATIONS, WEEKDAYS
from core.number_words import NUMBER_WORDS
from memories.models import Memory
from memories.vectors import numbers_in


def scope_queryset(owner, project):
    queryset = Memory.objects.owned_by(owner).active()
    return queryset.in_scope(project) if project else queryset.filter(project__isnull=True)


@dataclass(frozen=True)
class Timing:
    """When a statement was made (`said`: the message's send time, else now) and when what it says became true
    (`valid`); `dated`: the statement itself named that time ("since May", "last week")."""

    valid: datetime
    said: datetime
    dated: bool


def timing(candidate, happened_at) -> Timing:
    said = happened_at or timezone.now()
    stated = getattr(candidate, "valid_from", None)
    return Timing(stated or said, said, stated is not None)


def _said_at(memory: Memory) -> datetime:
    """When a stored memory was stated: its message's send time (extracted memories carry it as happened_at),
    else when it was written (by hand, in the panel or the API)."""
    return (memory.happened_at if memory.message_id and memory.happened_at else None) or memory.created_at


def _older(when: Timing, memory: Memory, *, ending: bool = False) -> bool:
    """The statement says what was true before `memory`. When both name their times, by valid time ("I moved to
    Lyon in March" said in June is older than "since May"); otherwise by when each was said, so a fact written by
    hand yesterday gives way to today's "we moved last week", and a message imported from January never
    replaces what was said today. Against an `ending` only by when each was said: a value that holds now outlives
    the end of the old one, even when it began before it."""
    said = _said_at(memory)
    if when.dated and not ending and abs((memory.valid_from - said).total_seconds()) > 1:
        return when.valid < memory.valid_from
    return when.said < said  # one message's statements in the order it makes them


# how much nearer its attribute an earlier statement of the same message must be for a later one not to replace it
CLEARER = 0.15


@dataclass
class Plan:
    action: str  # ADD | KEEP | UPDATE | NOOP
    why: str
    targets: list = field(default_factory=list)
    past: bool = False  # an UPDATE whose statement is older than the current memory: written as its past
    # targets that say the old value ended ("Lea and I split up in the spring"): a new value that holds now is newer
    # than one of them when said after it, whenever it began ("dating Nora since August")
    endings: set = field(default_factory=set)


def _same(frames_a: list[dict], holder: str, attribute: str) -> dict | None:
    return next((f for f in frames_a if f["holder"] == holder and f["attribute"] == attribute), None)


def plan_for(owner, candidate, found, near, known, scope, llm_decide, *, when) -> Plan:
    """The decision for one candidate whose frames are `found` (a replacement's frame takes the attribute it
    names, in place), among `near` (its nearest live memories) and the memories `known` classified."""
    if near and near[0][1] >= settings.MEMORY_DUPLICATE_THRESHOLD and numbers_in(near[0][0].content) == numbers_in(
            candidate.content) and not _changes(found, known.frames.get(near[0][0].pk, [])):
        return Plan("NOOP", f"already known (cosine {near[0][1]:.2f})", [near[0][0]])
    if near and (count := _recounted(candidate, *near[0])):
        return _timed(Plan("UPDATE", count, [near[0][0]]), when)
    if llm_decide is not None:
        action, target_id, why = llm_decide(candidate, [(str(m.pk), m.content) for m, _ in near])
        target = next((m for m, _ in near if str(m.pk) == target_id), None)
        if action in ("UPDATE", "NOOP") and target is not None:
            return _timed(Plan(action, why, [target]), when)
        return Plan("KEEP" if action == "KEEP" else "ADD", why or "new information")
    candidates_pool = _pool(owner, near, known, scope)
    found[:], unread = _adopted(found, candidates_pool, candidate.content)
    if unread and not any(f["single"] and _same(fs, f["holder"], f["attribute"]) for f in found
                          for _, fs in candidates_pool):
        # "replaced the Subaru with a Rivian" beside "has a 2015 Subaru Forester", which no frame reads
        swap = next((f for f in found if f.get("replaces")), None)
        why = f"{swap['replaces']} replaced by {swap['value']}; frame cosine {swap['score']:.2f}" if swap else (
            "the statement names what it replaces")
        return _timed(Plan("UPDATE", why, unread), when)
    if not found:
        attribute = getattr(candidate, "attribute", "")
        target = attribute and (scope_queryset(owner, scope).filter(
            subject__iexact=candidate.subject, metadata__attribute=attribute).order_by("-valid_from").first())
        if target:  # an extractor's own slot (the LLM's "attribute"), when no frame was read
            return _timed(Plan("UPDATE", f"same subject and attribute ({attribute}) with new content", [target]),
                          when)
        return Plan("ADD", "new information (no attribute recognised)")
    plan: Plan | None = None
    for frame in found:
        every = [(m, f) for m, fs in candidates_pool if (f := _same(fs, frame["holder"], frame["attribute"]))]
        matches = [(m, f) for m, f in every if not f.get("ended")]
        label = _label(frame)
        if frame["ended"]:
            # "sold my Mini" ends "a Mini Cooper": the ending may name part of the value
            ended = [m for m, f in matches if set(frame["value"].split() or "?") <= set(f["value"].split())]
            if not ended and frame["value"]:
                # "I've left St Mary's" read as another attribute than "a nurse at St Mary's Hospital": the
                # speaker's current value it names is what ends
                named = [(m, f) for m, fs in candidates_pool for f in fs
                         if f["single"] and not f.get("ended") and f["holder"] == frame["holder"] and f["value"]
                         and set(frame["value"].split()) <= set(f["value"].split())]
                ended = list(dict.fromkeys(m for m, _ in named))
                if named:  # the ending is of that attribute: a new value of it retires the ending in turn
                    frame["attribute"], frame["single"] = named[0][1]["attribute"], True
                    label = _label(frame)
            newer = [(m, f) for m, f in matches if m not in ended and frame["single"]]
            # a named value that ended outranks an unnamed one kept as the past ("Jonah and I broke up": a
            # relationship ended, and it is Jonah's)
            if ended and (plan is None or (plan.past and plan.action == "UPDATE")):
                plan = Plan("UPDATE", f"{label}: {frame['value']} ended; frame cosine {frame['score']:.2f}", ended)
            elif newer and plan is None and not frame.get("denied"):  # "I'm not going vegan": holds beside it
                # "I left Acme", "I worked at Renault before that" once Doctolib is current (stored before or
                # never): a statement about an older time, so the past of that chain; no current line names only
                # the old value
                plan = Plan("UPDATE", f"{label}: {frame['value'] or '?'} ended, {newer[0][1]['value']} is current;"
                                      f" kept as the past; frame cosine {frame['score']:.2f}", [newer[0][0]],
                            past=True)
            continue
        same = [m for m, f in matches if f["value"] and set(f["value"].split()) == set(frame["value"].split())]
        # a new value also retires a current "I left Acme" (it speaks of the old value); within one message, a
        # reading much weaker than a value it already said stands beside it ("I went fully vegan in January. dairy was
        # wrecking my stomach": no diet of "dairy stomach" replaces veganism)
        other = [(m, f) for m, f in every if m not in same and not (
            m.pk in known.written and not f.get("ended") and f.get("score", 0) >= frame["score"] + CLEARER)]
        if same and plan is None and not _changes(found, known.frames.get(same[0].pk, [])):
            return Plan("NOOP", f"{label}: same value ({frame['value']}); frame cosine {frame['score']:.2f}",
                        [same[0]])
        if frame["single"] and other:
            other += [(m, {"value": "", "ended": True}) for m in _told_ended(
                candidates_pool, frame["holder"], [f["value"] for _, f in other]) if m not in dict(other)]
            olds = ", ".join(dict.fromkeys(f["value"] or "?" for _, f in other if f["value"]))
            why = f"{label}: {olds} -> {frame['value'] or '?'}; frame cosine {frame['score']:.2f}"
            if plan is None:
                plan = Plan("UPDATE", why, [m for m, _ in other])
            elif plan.action == "UPDATE":
                plan.why += f"; {why}"
                plan.targets += [m for m, _ in other if m not in plan.targets]
            if plan.action == "UPDATE":
                plan.endings |= {m.pk for m, f in other if f.get("ended")}
        elif plan is None and matches:
            plan = Plan("KEEP", f"{label}: another value beside {len(matches)} stored "
                                f"({'accumulates' if not frame['single'] else 'kept'})")
    if plan is None:
        frame = found[0]
        plan = Plan("ADD", f"new information ({_label(frame)}: {frame['value'] or '?'})")
    return _timed(plan, when)


# a count that runs ("has bought five tops so far", "now has 25 titles on the list"), said without a day of its own
_RUNNING = re.compile(r"(?i)\b(?:so far|now|currently|right now|in total|altogether|to date|at the moment)\b")
_A_DAY = re.compile(rf"(?i)\b(?:today|yesterday|tonight|tomorrow|this morning|last night|"
                    rf"on (?:{'|'.join(WEEKDAYS)})|\d{{1,2}} (?:{'|'.join(MONTH_ABBREVIATIONS + ('may',))})\w*)\b")
# the same statement but its count (all-MiniLM-L6-v2: LongMemEval's "three tops from H&M" ~ "five tops ... so far,
# and ..." 0.81; "ran 5 km on Monday" ~ "ran 10 km on Tuesday" 0.89, kept apart by its day)
RECOUNT_SIMILARITY = 0.8


_NUMBER_WORDS = re.compile(rf"\b(?:{'|'.join(NUMBER_WORDS)})\b")


def _count_in(text: str) -> list[str]:
    return numbers_in(text) or _NUMBER_WORDS.findall(text.lower())


def _counted(text: str, figure: str) -> str:
    """The word after a figure: what it counts ("five tops"), "" when none follows ("currently 25, and ...")."""
    found = re.search(rf"\b{re.escape(figure)}\s+([a-z][\w-]*)", text.lower())
    return found[1] if found else ""


def _recounted(candidate, memory: Memory, similarity: float) -> str:
    """Why the candidate gives a running count of the memory's anew ("has already bought three tops from H&M" ->
    "has bought five tops from H&M so far"), or "": one figure each, and they differ, in nearly the same words,
    of the same subject; the new one runs (so far, now) and neither is an event of its day ("ran 5 km today")."""
    if similarity < RECOUNT_SIMILARITY or (memory.subject or "").lower() != (candidate.subject or "").lower():
        return ""
    old, new = _count_in(memory.content), _count_in(candidate.content)
    if len(old) != 1 or len(new) != 1 or old == new or not _RUNNING.search(candidate.content) or any(
            _A_DAY.search(text) for text in (memory.content, candidate.content)):
        return ""
    words_old, words_new = set(re.findall(r"[\w-]+", memory.content.lower())), set(re.findall(
        r"[\w-]+", candidate.content.lower()))
    what_old, what_new = _counted(memory.content, old[0]), _counted(candidate.content, new[0])
    if (what_old and what_old not in words_new) or (what_new and what_new not in words_old):
        return ""  # "has run 3 marathons" and "5 half marathons": not the same count
    return f"the same count, now {new[0]} (was {old[0]}); cosine {similarity:.2f}"


def _adopted(found: list[dict], pool, content: str) -> tuple[list[dict], list[Memory]]:
    """A replacement said outright takes the attribute of the current value it names ("swapped the Prius for a
    Polestar 2": the car, as "commutes in a Toyota Prius" says). With none, the speaker's memories no frame reads
    that name what was replaced ("has a 2015 Subaru Forester") are what it replaces: (frames kept, those). A bare
    favourite said to be new ("big thief is my fav now") is of the one favourite the holder has."""
    for frame in (f for f in found if f["attribute"] == "favourite" and not f.get("replaces") and not f["ended"]):
        kinds = {f["attribute"] for _, fs in pool for f in fs if f["single"] and f["holder"] == frame["holder"]
                 and f["attribute"].startswith("favourite ")}
        if len(kinds) == 1 and _NEWLY.search(content):
            frame["attribute"] = kinds.pop()
    unread: list[Memory] = []
    for frame in (f for f in found if f.get("replaces")):
        old = _stems(frame["replaces"].split())
        # a bare "favourite" takes the favourite it replaces ("ramen has overtaken sushi as my favourite")
        frame["attribute"] = next((
            f["attribute"] for _, fs in pool for f in fs if f["single"] and f["attribute"]
            and f["attribute"].startswith(frame["attribute"]) and f["holder"] == frame["holder"]
            and old <= _stems(f["value"].split())), "") if frame["attribute"] in ("", "favourite") else (
            frame["attribute"])
        if not frame["holder"]:
            unread += [m for m, fs in pool if not fs and m.subject.lower() in ("", "user")
                       and old <= _stems(re.findall(r"[\w-]+", m.content.lower()))]
    return [f for f in found if f["attribute"]], unread


_SAID_ENDED = re.compile(r"(?i)\b(?:sold|traded(?: it)? in|scrapped|gave away|got rid of|wrote off|handed back)\b")


def _told_ended(pool, holder: str, olds: list[str]) -> list[Memory]:
    """The speaker's memories that no frame reads as holding anything and that say an old value went ("sold the old
    Focus" beside "drives a 2012 Ford Focus"): the past too, once a new value holds."""
    words = {w for value in olds for w in value.split() if len(w) > 2 and not w.isdigit()}
    return [m for m, fs in pool if all(f.get("ended") for f in fs) and not holder
            and (m.subject or "").lower() in ("", "user") and _SAID_ENDED.search(m.content)
            and words & set(re.findall(r"[\w-]+", m.content.lower()))]


def _stems(words) -> set[str]:
    """Words as compared across a value said and one lemmatised ("slow horses" and "slow horse")."""
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words}


_NEWLY = re.compile(r"(?i)\b(?:now|these days|nowadays|anymore|any more|new)\b")


def _changes(found: list[dict], stored: list[dict]) -> bool:
    """The statement gives a single-valued attribute of a stored memory another value: no restatement, however
    near ("These days my favourite game is Go, not chess" beside "Chess is my favourite game")."""
    return any(f["single"] and not f["ended"] and (g := _same(stored, f["holder"], f["attribute"])) is not None
               and set(g["value"].split()) != set(f["value"].split()) for f in found)


def _label(frame: dict) -> str:
    return f"{frame['holder'] + ' ' if frame['holder'] else ''}{frame['attribute']}"


def _pool(owner, near, known, scope) -> list[tuple[Memory, list[dict]]]:
    """The live memories to compare with, read again inside the transaction (one may have been superseded or
    deleted since the frames were read): the nearest first, then those recording one of the attributes."""
    order = [m.pk for m, _ in near] + [pk for pk in known.frames if pk not in {m.pk for m, _ in near}]
    live = {m.pk: m for m in scope_queryset(owner, scope).filter(pk__in=order)} if order else {}
    return [(live[pk], known.frames[pk]) for pk in order if pk in live and pk in known.frames]


def _timed(plan: Plan, when: Timing) -> Plan:
    """Time, not arrival, orders an update: a statement about an older time than the current memory's enters its
    chain as the past (`_older`)."""
    if plan.action == "UPDATE" and plan.targets and not plan.past:
        newest = max(plan.targets, key=lambda m: m.valid_from)
        if _older(when, newest, ending=newest.pk in plan.endings):
            plan.past, plan.targets = True, [newest]
            plan.why += (f"; said of {when.valid:%Y-%m-%d}, before the current memory's "
                         f"{newest.valid_from:%Y-%m-%d}")
    return plan


def carried(stored: list[dict], found: list[dict], content: str) -> list[dict]:
    """The facts a superseded memory states alone (`restated`) that the statement superseding it (`content`,
    whose frames are `found`) leaves as they were: another attribute than any it speaks of. A statement naming a
    name or a number none of its frames read may speak of more than was read ("Orsted hired me as an analyst"
    read as a job title only): it leaves nothing."""
    read = {word for f in found for word in f["value"].split()}
    named = re.findall(r"(?<![.!?] )(?<!^)\b(?:[A-Z][\w&'-]*|(?!(?:19|20)\d\d\b)\d+)", content)
    if any(word.lower() not in read for word in named):
        return []
    said = {(f["holder"], f["attribute"]) for f in found}
    ended = [set(f["value"].split()) for f in found if f["ended"] and f["value"]]  # "I've left St Mary's"
    # the value being replaced, read as another attribute too ("a student at King's College": a school, and an
    # employer), goes with it
    replaced = {word for f in stored if (f["holder"], f["attribute"]) in said and f.get("restated")
                for word in f["value"].split()}
    return [f for f in stored if f.get("restated") and not f.get("ended") and (f["holder"], f["attribute"]) not in said
            and not any(words <= set(f["value"].split()) for words in ended)
            and not replaced & set(f["value"].split())]
