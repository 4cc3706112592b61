"""The one sentence splitter, for documents (paragraphs, capitals) and dialogue (lines, any case)."""

from extraction.sentences import SENTENCE_END, split_sentences


def test_documents_split_at_sentence_ends_inside_paragraphs_and_keep_wrapped_lines_together():
    text = "We decided to use Rust. The audit\nis due on Friday!\n\nIs it late? Yes, it is."
    assert split_sentences(text) == ["We decided to use Rust.", "The audit is due on Friday!", "Is it late?",
                                     "Yes, it is."]


def test_abbreviations_end_no_sentence():
    assert split_sentences("Dr. Maria Keller leads the team, e.g. Mr. Smith. It works.") == [
        "Dr. Maria Keller leads the team, e.g. Mr. Smith.", "It works."]


def test_a_lower_case_word_after_a_full_stop_starts_no_document_sentence():
    assert split_sentences("The price is approx. ten euros. Done.") == ["The price is approx. ten euros.", "Done."]
    assert SENTENCE_END.search("version 2. the next") is None


def test_dialogue_ends_sentences_at_line_breaks_and_before_lower_case_and_drops_bullets():
    text = "i moved to berlin. it is nice!! lol\n- I love cats\n2) my dog is Rex"
    assert split_sentences(text, dialogue=True) == ["i moved to berlin.", "it is nice!!", "lol", "I love cats",
                                                    "my dog is Rex"]


def test_empty_text_has_no_sentences():
    assert split_sentences("") == [] == split_sentences(" \n\n ", dialogue=True)


def test_an_initialism_before_a_lower_case_word_ends_nothing():
    assert split_sentences("Honestly Fontaines D.C. are my favourite band now.", dialogue=True) == [
        "Honestly Fontaines D.C. are my favourite band now."]
    assert split_sentences("We flew to the U.K. It was long.") == ["We flew to the U.K.", "It was long."]


def test_a_middle_initial_ends_no_sentence():
    assert split_sentences("My favourite author is Ursula K. Le Guin. I reread her.", dialogue=True) == [
        "My favourite author is Ursula K. Le Guin.", "I reread her."]
