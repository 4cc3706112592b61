"""What the speaker has, said the way chat says it: a phone named by what it is used for, a replacement, a contact
given "from now on", and a number whose owner the next sentence names."""

import pytest

from extraction.possessions import said


@pytest.mark.parametrize(("text", "read"), [
    # a phone in use, named with its model: the speaker's phone, said once
    ("The banking app freezes on my Moto G84 and I can't log in.",
     "The banking app freezes on my phone and I can't log in. My phone is a Moto G84."),
    ("Battery life with my iPhone 12 Mini is awful",
     "Battery life with my phone is awful. My phone is an iPhone 12 Mini."),
    # ... but not in a message about a change, which says it itself
    ("Cracked the screen on my Pixel 7, so I bought an iPhone.",
     "Cracked the screen on my Pixel 7, so I bought an iPhone."),
    # a replacement named by its make
    ("Lost my old phone at the gig. Replacement's a Galaxy S24.",
     "Lost my old phone at the gig. My new phone is a Galaxy S24."),
    ("The replacement is a Honda Jazz, so parking is easier.", "My new car is a Honda Jazz, so parking is easier."),
    ("The replacement is a better plan.", "The replacement is a better plan."),
    # typing from a phone
    ("Sorry for typos, typing this from my Redmi Note 12", "Sorry for typos, my phone is a Redmi Note 12"),
    # a contact given from now on is the speaker's ...
    ("Old SIM got blocked. 0771 234 5678 from now on.", "Old SIM got blocked. My number is 0771 234 5678 from now on."),
    ("Please use kim.to@fastmail.org for all bookings going forward.",
     "My email is kim.to@fastmail.org for all bookings going forward."),
    ("So going forward, kim@to.dev is the address to use.", "My email is kim@to.dev."),
    # ... unless someone else's number was named before it
    ("My nan's phone broke. 0771 234 5678 from now on.", "My nan's phone broke. 0771 234 5678 from now on."),
    ("From today all booking mail should go to desk@lumen.ie, thanks.",
     "From today my email is desk@lumen.ie, thanks."),
    # whose a number is, said in the next sentence
    ("Pop this in the contacts: 0161 496 0000. That's Ruth from the allotment.",
     "Pop this in the contacts: 0161 496 0000 is Ruth's number from the allotment."),
    ("Save this as well: +44 7700 900111. It is my neighbour Omar's.",
     "Save this as well: +44 7700 900111 is my neighbour Omar's number."),
    # a phone that arrived, a line, correspondence from now on
    ("Pixel 9 finally arrived! Setting it up now.", "My new phone is a Pixel 9! Setting it up now."),
    ("After the move the line is 0161 496 0321.", "After the move my number is 0161 496 0321."),
    ("The Galaxy S24 I switched to charges fast.", "I switched to the Galaxy S24 and it charges fast."),
    ("Correspondence from now on to j.voss@posteo.de, please.", "my email is j.voss@posteo.de, please."),
])
def test_what_the_speaker_has_is_said_as_a_statement(text, read):
    assert said(text) == read
