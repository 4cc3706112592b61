"""What a query needs, by meaning, and which memories answer that kind of need.

An agent asks on the user's behalf: "what should I not cook for them?" needs the restrictions ("Is allergic to
peanuts"), "what can I get her for her birthday?" the preferences, "which city should I post the parcel to?" where
they live. The question and the fact share no word and
little meaning for a small embedding model (cosine ~0.1-0.2), but the question is close to other questions of the
same need, and the fact to other facts of its kind. So:

- the query's need: its vector's best cosine with a few generic need questions per kind (NEEDS), turned into a
  strength (0 below INTENT_FLOOR, 1 from INTENT_FULL, scaled down when the next kind is nearly as close, unless
  one of the two holds the other: what suits them holds restrictions, limits and preferences); only the best kind
  counts, and only when it is clear;
- a memory's membership of that kind: 1 when its `category` names the kind, else its vector's best cosine with
  the kind's prototypes (KINDS; for memories written by hand without a category, or filed under another one), 0
  below MEMBER_FLOOR, 1 from MEMBER_FULL;
- the boost: INTENT_WEIGHT x strength x membership (the `intent` part of the fused ranking), less the share the
  query's best match by meaning already has (`boost`).

The anchors are embedded once per process and provider (a few dozen short texts); a search then costs one small
matrix product for the query and a few cosines per candidate (memories.search.query computes those the way its path
computes cosines: pgvector's halfvec in SQL, the same arithmetic in the snapshot).
"""

import functools
from dataclasses import dataclass

import numpy as np

from integrations import embeddings
from memories.search.formula import INTENT_WEIGHT

# Questions an agent asks when it needs a kind of memory, phrased generically (no fact's own words).
NEEDS = {
    "restriction": ("what should I avoid serving them?", "what can't they eat or drink?",
                    "is there anything they must not have?", "what are they allergic to?",
                    "is there a medication they cannot take?", "would that dish be a problem for their diet?",
                    "is it safe to offer them that?", "anything to watch out for when I cook for them?",
                    "what would make them sick?"),
    "preference": ("what would they enjoy?", "what do they like?", "what don't they like?",
                   "what could I give them as a present?", "what are their hobbies?",
                   "what are they into?", "what would make them happy?", "what do they love doing?"),
    "goal": ("what are they planning to do?", "what do they want to achieve?", "what are they hoping for?",
             "what are they working towards?", "what are they saving up for?", "what are they preparing for?",
             "what is their dream?"),
    "home": ("where do they live?", "what is their address?", "where should I send it to them?",
             "which city are they based in?", "where could I visit them?"),
    "pet": ("what pet do they have?", "what animal do they live with?", "who looks after their pet?",
            "what is their pet called?"),
    "transport": ("how do they get around?", "how do they get to work?", "do they drive?",
                  "how do they commute?", "could they drive me somewhere?"),
    "work": ("what is their job?", "what is their profession?", "what is their occupation?",
             "what career are they in?", "what do they work as?"),
    "suitability": ("would they like that?", "is that a good idea for them?", "would that suit them?",
                    "would they be ok with that?", "is that a good plan for them?"),
    "limitation": ("is there anything they are afraid of?", "would that activity be too much for them?",
                   "would they feel uncomfortable there?", "could that outing be a problem for them?",
                   "can they manage that physically?"),
}
# What memories of each kind say, as short generic facts: a memory whose category does not name the kind (written by
# hand, or filed under another) is of it as much as its best cosine with one of them. The best of several, not
# their average: a small model puts "teaches maths at a secondary school" near "works as a teacher" (0.43) and
# nowhere near the average of what jobs are like (0.21). A job said by what they do is nearer its topic than any
# "works as": "Teaches chemistry at a secondary school in Leeds" was 0.28 from the nearest job here, 0.50 from
# "teaches at a school". So are the commonest diets and conditions: "Vegan since 2019" 0.30 from a special diet, 0.70
# from "is vegan or vegetarian"; "Is diabetic" 0.25 from a medical condition, 0.45 from "has asthma or diabetes".
KINDS = {
    "restriction": ("is allergic to something", "can't eat certain foods", "doesn't drink something",
                    "follows a special diet", "is vegan or vegetarian", "has a medical condition",
                    "has asthma or diabetes", "must not take a medicine"),
    "preference": ("loves something", "likes doing something", "hates something", "favourite things",
                   "prefers something", "enjoys a hobby"),
    "goal": ("plans to do something", "wants to achieve something", "is saving up for something",
             "hopes to one day"),
    "home": ("lives in a city", "lives at an address", "lives in a flat or house in a town"),
    "pet": ("has a dog", "has a cat", "has a pet animal", "has a pet called"),
    "transport": ("drives a car", "cycles to work", "takes the bus or the train"),
    "work": ("works as a teacher", "works at a company", "is a product manager", "is a nurse", "is an engineer",
             "has a job at a bank", "teaches at a school", "runs a business"),
    "limitation": ("is afraid of something", "gets sick easily", "can't do strenuous activity", "has a phobia"),
}
# The kind of an attribute the reconciler records on a memory it read (metadata "attribute": extraction's attribute
# frames): a member outright, as a category is. "The user starts at Monzo in the week after 3 July 2024." is 0.22 at
# best from any prototype, but its frame was the employer's.
ATTRIBUTE_KINDS = {"employer": "work", "job title": "work", "workplace": "work", "home": "home", "car": "transport",
                   "diet": "restriction", "allergy": "restriction", "health": "restriction", "pet": "pet",
                   "favourite": "preference", "hobby": "preference"}
# whether something would suit them: anything that rules it out or in
KINDS["suitability"] = KINDS["restriction"] + KINDS["limitation"] + KINDS["preference"]
# Not relationships: questions about family name them ("where does her sister live?") and find them by their
# words; as a kind, "family" is in so many dialogue turns that boosting it cost LoCoMo (R@10 0.7445 against 0.745).
# A pet or a way of getting around is asked for without its name ("what should I feed their pet?" -> "has a cat named
# Miso"): those two kinds cost LoCoMo 0.0004 (R@10 0.7459 -> 0.7455) for five of bench/paraphrase_needs.py's questions.
# all-MiniLM-L6-v2: need questions of one kind reach ~0.45-0.65 with each other; a question of another kind
# ~0.1-0.35 (LoCoMo's questions: 90% below 0.33)
INTENT_FLOOR, INTENT_FULL = 0.35, 0.55
# and the best kind must stand out from the next: a question near two kinds ("how does she get to her job?": a way
# of getting around 0.50, work 0.47) asks for neither clearly, unless one holds the other (a restriction 0.54 and
# what suits them 0.50: "would a steak dinner be a good idea for them?")
MARGIN_FLOOR, MARGIN_FULL = 0.05, 0.15
# a memory and the nearest of its kind's prototypes: members ~0.4-0.7, others ~0.1-0.35
MEMBER_FLOOR, MEMBER_FULL = 0.3, 0.45


@dataclass(frozen=True)
class Intent:
    kind: str  # a key of NEEDS: also the `category` value that makes a memory a member outright
    strength: float  # 0..1 (0: two kinds nearly as close, neither gains)
    directions: np.ndarray  # the kind's prototypes (KINDS) as unit vectors, one per row (both kinds': a tie)
    rivals: np.ndarray  # the prototypes of the kinds it does not hold (for `kin`)


def _unit(vectors) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float64)
    return array / np.linalg.norm(array, axis=-1, keepdims=True)


@functools.lru_cache(maxsize=4)
def _anchors(provider) -> tuple[np.ndarray, np.ndarray, list[str], dict[str, np.ndarray]]:
    """(every need question's unit vector as one float32 matrix, the index where each kind's rows start, the kinds
    in that order, each kind's prototypes as unit vectors, one per row), embedded once per provider."""
    texts = [t for kind in NEEDS for t in NEEDS[kind]] + [t for kind in KINDS for t in KINDS[kind]]
    vectors = _unit(provider.embed(texts))
    count = sum(len(questions) for questions in NEEDS.values())
    starts = np.cumsum([0, *(len(NEEDS[kind]) for kind in NEEDS)])[:-1]
    prototypes, at = {}, count
    for kind in KINDS:
        prototypes[kind] = vectors[at:at + len(KINDS[kind])]
        at += len(KINDS[kind])
    return vectors[:count].astype(np.float32), starts, list(NEEDS), prototypes


def ramp(value: float | None, floor: float, full: float) -> float:
    """0 at or below `floor`, 1 at or above `full`, linear between."""
    if value is None:
        return 0.0
    return min(1.0, max(0.0, (value - floor) / (full - floor)))


def _holds(wider: str, kind: str) -> bool:
    """Whether `wider`'s prototypes hold all of `kind`'s (a preference is part of what suits them; each kind holds
    itself)."""
    return set(KINDS[wider]) >= set(KINDS[kind])


def query_intent(vector) -> Intent | None:
    """The kind of memory the query (its vector) needs: with a strength when one is clearly asked for, at strength 0
    (both kinds' prototypes: nothing gains, the nearest of either may fill a short list) when a second kind is
    nearly as close; None when none is near (and when the embedding provider cannot embed the anchors)."""
    if vector is None:
        return None
    try:
        needs, starts, kinds, prototypes = _anchors(embeddings.provider_for(embeddings.model_of(vector)))
    except embeddings.EmbeddingError:
        return None
    query = np.asarray(vector, dtype=np.float32)
    per_kind = np.maximum.reduceat(needs @ query, starts) / max(float(np.linalg.norm(query)), 1e-12)
    order = np.argsort(-per_kind)
    best, second, kind = float(per_kind[order[0]]), float(per_kind[order[1]]), kinds[order[0]]
    strength = ramp(best, INTENT_FLOOR, INTENT_FULL)
    if strength <= 0:
        return None
    asked = [kind]
    if not (_holds(kind, kinds[order[1]]) or _holds(kinds[order[1]], kind)):  # one inside the other agree
        strength *= ramp(best - second, MARGIN_FLOOR, MARGIN_FULL)
        if strength <= 0:  # two kinds nearly as close: neither gains, the nearest of either may fill a short list
            asked.append(kinds[order[1]])
    directions = np.concatenate([prototypes[k] for k in asked])
    rivals = np.concatenate([prototypes[other] for other in kinds
                             if not any(_holds(k, other) or _holds(other, k) for k in asked)])
    return Intent(kind, strength, directions, rivals)


def membership(intent: Intent, category: str | None, similarity: float | None, attribute: str = "") -> float:
    """How much a memory (its `category`, the `attribute` it records, its best cosine with the kind's prototypes)
    is of the kind asked for."""
    if (category or "").strip().lower() == intent.kind or ATTRIBUTE_KINDS.get(attribute) == intent.kind:
        return 1.0
    return ramp(similarity, MEMBER_FLOOR, MEMBER_FULL)


def kin(similarity: float | None, rival: float | None) -> float | None:
    """A memory's cosine with the kind asked for (`similarity`) when that kind is nearer to it than any kind it does
    not hold (`rival`): what lets it fill a short list (memories.search.ranking.nearness) when it is too far to be a
    member ("Loves Studio Ghibli films": a preference 0.24, the nearest kind), and keeps out what is nearer another
    kind ("Lives in Berlin" for a restriction)."""
    if similarity is None or (rival is not None and rival >= similarity):
        return None
    return similarity


def boost(intent: Intent | None, category: str | None, similarity: float | None, *, best: float = 0.0,
          attribute: str = "") -> float:
    """The `intent` part of a memory's fused score. `best` (0..1: the calibrated cosine of the query's nearest
    candidate) takes back as much of it: a query with a clear match by meaning ("what hobby does she do with clay?"
    -> "takes pottery classes", 0.43) needs no kind to find it, and a flat boost of every preference would bury it;
    a need that matches nothing by meaning ("what should I not cook for them?": 0.15) gets it whole."""
    if intent is None:
        return 0.0
    return INTENT_WEIGHT * intent.strength * membership(intent, category, similarity, attribute) * (1.0 - best)
