from panel.templatetags.scores import PART_MEANINGS, score_parts


def test_parts_that_add_nothing_visible_are_left_out_in_the_rankings_order():
    parts = {"semantic": 0.24, "keyword": 0.0, "intent": 0.004, "importance": 0.05, "recency": 0.0049}
    assert score_parts(parts) == [("semantic", 0.24, PART_MEANINGS["semantic"]),
                                  ("importance", 0.05, PART_MEANINGS["importance"])]
    assert score_parts(None) == [] and score_parts({"new": 0.3}) == [("new", 0.3, "new")]
