"""The embedded server's bookkeeping of the processes using it."""

import json
import os

import pytest

from memento.embedded_db import prune_dead_handles


@pytest.mark.parametrize("content", ["", "[12", "{}"])
def test_a_handle_file_left_empty_or_broken_is_started_again(tmp_path, content):
    """A process killed while the library rewrote the file (it truncates first) left it empty, and every process
    after it failed at start reading it."""
    (tmp_path / ".handle_pids.json").write_text(content)
    prune_dead_handles(tmp_path)
    assert json.loads((tmp_path / ".handle_pids.json").read_text()) == []


def test_dead_processes_are_forgotten_and_live_ones_kept(tmp_path):
    (tmp_path / ".handle_pids.json").write_text(json.dumps([os.getpid(), 2**22 + 12345]))
    prune_dead_handles(tmp_path)
    assert json.loads((tmp_path / ".handle_pids.json").read_text()) == [os.getpid()]
