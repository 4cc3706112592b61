import threading

import pytest

from core.ahead import ahead, ahead_until

WAIT = 600  # seconds: a bound for a loaded machine, never reached when the code is right


def test_results_come_in_order_with_their_items():
    with ahead(lambda n: n * n, [1, 2, 3]) as results:
        assert list(results) == [(1, 1), (2, 4), (3, 9)]


def test_nothing_to_do():
    with ahead(lambda n: 1 / 0, []) as results:
        assert list(results) == []


def test_the_next_item_is_worked_on_while_the_caller_handles_this_one():
    started = {n: threading.Event() for n in (1, 2)}

    def work(n):
        started[n].set()
        return n

    with ahead(work, [1, 2]) as results:
        for item, _ in results:
            if item == 1:  # the caller is still on item 1: item 2's work has been started already
                assert started[2].wait(WAIT)


def test_the_next_item_may_depend_on_the_last_result():
    seen = []

    def following(item, result):
        seen.append((item, result))
        return result if result < 20 else None

    with ahead_until(lambda n: n * 3, 2, following) as results:
        assert [result for _, result in results] == [6, 18, 54]
    assert seen == [(2, 6), (6, 18), (18, 54)]


def test_an_error_of_the_work_is_raised_where_its_result_is_taken():
    def work(n):
        if n == 2:
            raise ValueError("bad batch")
        return n

    handled = []
    with pytest.raises(ValueError, match="bad batch"):
        with ahead(work, [1, 2, 3]) as results:
            for item, _ in results:
                handled.append(item)
    assert handled == [1]


def test_an_error_of_the_caller_cancels_the_rest_and_waits_for_the_running_work():
    done = []
    started, release = threading.Event(), threading.Event()

    def work(n):
        if n == 2:
            started.set()
            assert release.wait(WAIT)
        done.append(n)
        return n

    with pytest.raises(RuntimeError):
        with ahead(work, [1, 2, 3, 4]) as results:
            for _item, _ in results:
                assert started.wait(WAIT)  # item 2's work is running while the caller fails on item 1
                release.set()
                raise RuntimeError("write failed")
    assert done == [1, 2]  # item 2 finished before the block was left; 3 and 4 never started
