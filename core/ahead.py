"""Slow calls one batch ahead of the writes: while the caller writes one batch's results (its own transactions),
the next batch's slow call (an embedding model, an extractor) already runs in one worker thread, so a pipeline
takes about the longer of the two per batch instead of their sum. The slow call runs on another thread (a
database connection of its own, if it opens one): it holds none of the caller's locks, and the caller's
transactions never wait for it.

`ahead(work, items)` for batches known up front; `ahead_until(work, first, following)` when the next batch
depends on the last one's result (a document's share: how many chunks the last call managed).
"""

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


@contextmanager
def ahead_until(work: Callable[[T], R], first: T | None,
                following: Callable[[T, R], T | None]) -> Iterator[Iterator[tuple[T, R]]]:
    """Iterate (item, work(item)) from `first`, each next item being `following(item, result)` (None: no more);
    the next item's work is started before this one's result is handed over. An exception of `work` is raised
    where its result is taken. Leaving the block (done, or an exception in the caller's loop) cancels work not
    started and waits for the one running."""
    pool = ThreadPoolExecutor(max_workers=1)
    pending: list[Future] = []

    def results() -> Iterator[tuple[T, R]]:
        item = first
        while item is not None:
            if not pending:
                pending.append(pool.submit(work, item))
            result = pending.pop().result()
            following_item = following(item, result)
            if following_item is not None:
                pending.append(pool.submit(work, following_item))
            yield item, result
            item = following_item

    try:
        yield results()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)


def ahead(work: Callable[[T], R], items: Iterable[T]) -> AbstractContextManager[Iterator[tuple[T, R]]]:
    """`ahead_until` over a known sequence of batches (none of them None)."""
    rest = iter(items)
    return ahead_until(work, next(rest, None), lambda _item, _result: next(rest, None))
