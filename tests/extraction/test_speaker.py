"""What the speaker says of themselves in passing, inside a request: whom they name, what they have."""

import pytest

from extraction.speaker import role_named


@pytest.mark.parametrize(("clause", "said"), [
    ("help me plan a surprise for my husband Marco", "My husband is Marco"),
    ("how do I stop my Pixel 7 killing the sync", "My phone is a Pixel 7"),
    ("can you clean up the photos on my iPhone 13 mini", "My phone is an iPhone 13 mini"),
    ("find winter tyres for my 2014 VW Polo", "My car is a 2014 VW Polo"),
    ("find winter tyres for my Ford", ""),  # a make alone names no model
    ("what's a good case for my old iPhone 8", ""),  # not the one they have now
    ("write a toast for my sister", ""),
])
def test_who_and_what_a_request_names_as_the_speakers(clause, said):
    assert role_named(clause) == said
