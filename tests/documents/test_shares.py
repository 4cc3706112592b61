"""A task's share of time: embedding calls sized to what is left of it at the pace of the last call (a call cannot
stop half-way: 224 chunks took 50 s on a loaded machine, while another user's message waited)."""

from types import SimpleNamespace

from documents import shares


def test_calls_are_sized_to_the_time_left_at_the_last_pace(settings, monkeypatch):
    settings.DOCUMENT_TASK_SECONDS = 2.5
    monkeypatch.setattr(shares, "time", SimpleNamespace(monotonic=lambda: 1000.0))  # a clock that stands still
    share = shares.Share("00000000-0000-0000-0000-000000000000", sliced=True)
    assert share.sized(32) == 32  # no pace known yet
    share.paced(10.0, 10)  # one second a chunk
    assert share.sized(32) == 2
    assert share.sized(1) == 1
    monkeypatch.setattr(share, "ends", share.ends - 10)  # the time is used up: still one chunk, never none
    assert share.sized(32) == 1
    assert shares.Share("00000000-0000-0000-0000-000000000000", sliced=False).sized(32) == 32  # a whole run
