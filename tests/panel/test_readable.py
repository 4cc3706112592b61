from panel.templatetags.readable import readable_items


def test_json_is_shown_as_readable_pairs_not_python_reprs():
    value = {"attribute": "home", "frames": [{"holder": "", "value": "Lisbon", "single": True}], "note": None}
    assert readable_items(value) == [("attribute", "home"), ("frames", "holder: —; value: Lisbon; single: yes"),
                                     ("note", "—")]
    assert readable_items(["a", 1]) == [("value", "a, 1")]
