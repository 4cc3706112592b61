"""Stateless web nodes: two gunicorn processes on one database and one Redis (the real redis-server, as CI installs
it) behave as one service. A write through node A is seen through node B on the next request, also by B's search
snapshot (validated against the database's stamp), a panel session started on A is valid on B, throttles count
across nodes in the shared cache, and a worker on the Redis broker serves both."""

import pytest
import requests

from tests.factories import UserFactory, token_for
from tests.web import two_nodes
from tests.worker import running_worker, wait_for


def _search(base: str, headers: dict, query: str) -> list[str]:
    answer = requests.post(f"{base}/api/memories/search/", json={"query": query, "mode": "keyword"},
                           headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    return [r["memory"]["content"] for r in answer.json()["results"]]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_write_through_one_node_is_seen_through_the_other_on_the_next_request(shared_cache):
    user = UserFactory(username="bea")
    user.set_password("right horse battery staple")
    user.save()
    headers = {"Authorization": f"Token {token_for(user)}"}
    # every search holds the owner's rows in the process from the first one on (memories.search.snapshot)
    with two_nodes({"CACHE_URL": shared_cache, "SEARCH_SNAPSHOT_AFTER": "1"}) as (a, b):
        first = requests.post(f"{a}/api/memories/", json={"content": "Drinks green tea at breakfast"},
                              headers=headers, timeout=60).json()
        assert _search(b, headers, "tea") == ["Drinks green tea at breakfast"]  # B now holds a snapshot
        assert _search(b, headers, "tea") == ["Drinks green tea at breakfast"]

        created = requests.post(f"{a}/api/memories/", json={"content": "Brews oolong tea in the afternoon"},
                                headers=headers, timeout=60)
        assert created.status_code == 201
        assert sorted(_search(b, headers, "tea")) == ["Brews oolong tea in the afternoon",
                                                      "Drinks green tea at breakfast"]

        patched = requests.patch(f"{a}/api/memories/{first['id']}/", json={"content": "Drinks matcha at breakfast"},
                                 headers=headers, timeout=60)
        assert patched.status_code == 200
        assert _search(b, headers, "matcha") == ["Drinks matcha at breakfast"]
        assert requests.get(f"{b}/api/memories/{first['id']}/", headers=headers,
                            timeout=60).json()["content"] == "Drinks matcha at breakfast"

        assert requests.delete(f"{a}/api/memories/{created.json()['id']}/", headers=headers,
                               timeout=60).status_code == 204
        assert _search(b, headers, "tea") == []
        assert requests.get(f"{b}/api/memories/", headers=headers, timeout=60).json()["count"] == 1

        # a panel session started on node A is valid on node B (sessions are database rows)
        browser = requests.Session()
        browser.get(f"{a}/accounts/login/", timeout=60)
        signed_in = browser.post(f"{a}/accounts/login/", data={
            "username": "bea", "password": "right horse battery staple",
            "csrfmiddlewaretoken": browser.cookies["csrftoken"]}, allow_redirects=False, timeout=60)
        assert signed_in.status_code == 302, signed_in.text[:500]
        page = browser.get(f"{b}/memories/", allow_redirects=False, timeout=60)
        assert page.status_code == 200 and "Drinks matcha at breakfast" in page.text


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_throttles_count_across_nodes(shared_cache):
    """Two nodes allow the rate once, not once each: the counts are in the shared Redis cache."""
    user = UserFactory(username="ana")
    user.set_password("right horse battery staple")
    user.save()
    headers = {"Authorization": f"Token {token_for(user)}"}
    env = {"CACHE_URL": shared_cache, "API_THROTTLE_USER": "4/minute", "API_THROTTLE_TOKEN": "100/minute",
           "API_THROTTLE_AUTH": "3/minute"}
    with two_nodes(env) as (a, b):
        answers = [requests.get(f"{base}/api/memories/", headers=headers, timeout=60).status_code
                   for base in (a, b, a, b, a)]
        assert answers == [200, 200, 200, 200, 429]
        assert requests.get(f"{b}/api/memories/", headers=headers, timeout=60).status_code == 429

        # sign-in attempts per address, whichever node they reach
        sign_ins = [requests.post(f"{base}/api/auth/token/", json={"username": "ana", "password": "wrong"},
                                  timeout=60).status_code for base in (a, b, a, b)]
        assert 429 not in sign_ins[:3] and sign_ins[3] == 429


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_on_redis_serves_every_node(shared_cache, redis_url):
    """A message appended through node A is extracted by a worker on the Redis broker and found through node B."""
    headers = {"Authorization": f"Token {token_for(UserFactory())}"}
    with running_worker("redis", redis_url) as worker, \
            two_nodes({"CACHE_URL": shared_cache, "CELERY_BROKER_URL": redis_url}) as (a, b):
        conversation = requests.post(f"{a}/api/conversations/", json={"title": "chat"}, headers=headers,
                                     timeout=60).json()
        appended = requests.post(f"{a}/api/conversations/{conversation['id']}/messages/", json={"messages": [
            {"role": "user", "content": "My daughter Emma starts school in May."}]}, headers=headers, timeout=60)
        assert appended.status_code == 201, appended.text

        found = wait_for(lambda: [c for c in _search(b, headers, "Emma school") if "Emma" in c], worker=worker)
        assert "school" in found[0]
