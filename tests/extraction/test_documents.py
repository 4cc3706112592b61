"""The document rules: precise rules for decisions, dates, people and requirements."""

import pytest

from extraction.documents import classify, extract_document


@pytest.mark.parametrize(("sentence", "kind", "subject"), [
    ("The report is due on Tuesday.", "deadline", "report"),
    ("The final draft is due by the end of the month.", "deadline", "final draft"),
    ("The launch is scheduled for 3 March 2025.", "date", "launch"),
    ("The conference takes place on June 12, 2025 in Lisbon.", "date", "conference"),
    ("Alice leads the design team.", "role", "Alice"),
    ("Bruno Tanaka is the product owner.", "role", "Bruno Tanaka"),
    ("Dr. Maria Keller manages the clinical trials.", "role", "Dr. Maria Keller"),
    ("We decided to use PostgreSQL.", "decision", ""),
    ("The board approved the budget for 2025.", "decision", "board"),
    ("It was decided that the office moves to Berlin.", "decision", ""),
    ("All services must support TLS 1.3.", "requirement", "services"),
    ("Each contractor is required to sign the NDA.", "requirement", "contractor"),
])
def test_statements_worth_remembering(sentence, kind, subject):
    candidate = classify(sentence)
    assert candidate is not None
    assert (candidate.kind, candidate.subject) == (kind, subject)
    assert candidate.content == sentence
    assert 0.5 <= candidate.importance <= 0.7
    assert candidate.category in ("fact", "context")


@pytest.mark.parametrize("sentence", [
    "If the report is late, we might decide to use MySQL.",
    "It is due on Tuesday.",
    "They decided to leave.",
    "Should we use PostgreSQL?",
    "The system may need to support TLS.",
    "This section describes the architecture.",
    "The weather was nice on Tuesday.",
    "The table below lists the results.",
    "Figure 3 shows the results of the survey.",
    "May is a nice month.",
    "Name | Role | Due",
    "Read the docs at https://example.com/due-on-tuesday.",
    "Short.",
])
def test_everything_else_is_left_alone(sentence):
    assert classify(sentence) is None


def test_at_most_the_limit_per_chunk_most_important_first_with_section_tags():
    text = ("Alice Moreau leads the design team. Bruno Tanaka leads the data team. We decided to use Rust. "
            "All services must support IPv6. The audit is due on Friday. The launch is scheduled for May 3. "
            "Chiara Okafor leads the research lab. The weather was fine.\n\nWe decided to use Rust.")
    found = extract_document(text, section_title="2. Staffing & Roles")
    assert len(found) == 5
    assert [c.kind for c in found] == ["deadline", "decision", "role", "role", "requirement"]  # ties: reading order
    assert all(c.tags[-1] == "2-staffing-roles" for c in found)
    assert len(extract_document(text, limit=2)) == 2
    assert len({c.content for c in extract_document(text, limit=10)}) == 7  # the repeated decision once
