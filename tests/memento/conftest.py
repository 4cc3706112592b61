import pytest
import redis

CACHE_DB = 3  # the Redis database of web nodes' shared cache in tests (the broker tests use 0)


@pytest.fixture
def shared_cache(redis_url):
    """`CACHE_URL` of a Redis database emptied for this test (an earlier test's throttle counts are gone), for the
    web processes a test starts."""
    if redis_url is None:
        pytest.skip("redis-server is not installed")
    url = redis_url.rsplit("/", 1)[0] + f"/{CACHE_DB}"
    redis.Redis.from_url(url).flushdb()
    return url
