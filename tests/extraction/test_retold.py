"""News told as the speaker's own and then given to someone else is said of them."""

import pytest

from extraction.retold import retold


@pytest.mark.parametrize(("text", "read"), [
    ("Just bought a Kia Ceed! Well, my brother Sam did, but I chose the colour.",
     "My brother Sam just bought a Kia Ceed! But I chose the colour."),
    ("Exciting stuff: started at Lumen Bank today. Ok, my flatmate did.",
     "Exciting stuff: my flatmate started at Lumen Bank today."),
    ("I got the job at Fenwick Foods. Actually, my sister Nia did.", "My sister Nia got the job at Fenwick Foods."),
    # someone described, not a relation, is no one of the speaker's: their phone is not the speaker's
    ("Got a new Pixel 9... well, our head of science did.", "The head of science got a new Pixel 9..."),
    ("Moved to Galway last week - my cousin, I mean. I'm still in Cork.",
     "My cousin moved to Galway last week. I'm still in Cork."),
    # another one doing the same, a question answered, and "did" before more words are no correction
    ("I moved to Leeds. My sister did too.", "I moved to Leeds. My sister did too."),
    ("Who got the car? My dad did.", "Who got the car? My dad did."),
    ("I switched banks. My partner did say it was cheaper.", "I switched banks. My partner did say it was cheaper."),
])
def test_news_given_to_someone_else_is_said_of_them(text, read):
    assert retold(text) == read
