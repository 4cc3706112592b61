"""Two independent gunicorn processes serve the same data: web processes keep no state of their own."""

import pytest
import requests

from tests.factories import UserFactory, token_for
from tests.web import free_port, start_gunicorn, stop


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_processes_serve_the_same_data():
    user = UserFactory()
    other = UserFactory()
    headers = {"Authorization": f"Token {token_for(user)}"}
    other_headers = {"Authorization": f"Token {token_for(other)}"}
    ports = [free_port(), free_port()]
    processes = []
    try:
        processes = [start_gunicorn(port) for port in ports]
        a, b = (f"http://127.0.0.1:{port}" for port in ports)

        created = requests.post(f"{a}/api/memories/", json={"content": "Prefers tea over coffee"}, headers=headers)
        assert created.status_code == 201, created.text
        memory_id = created.json()["id"]

        seen = requests.get(f"{b}/api/memories/{memory_id}/", headers=headers)
        assert seen.status_code == 200
        assert seen.json()["content"] == "Prefers tea over coffee"

        patched = requests.patch(f"{b}/api/memories/{memory_id}/", json={"content": "Prefers green tea"},
                                 headers=headers)
        assert patched.status_code == 200
        assert requests.get(f"{a}/api/memories/{memory_id}/", headers=headers).json()["version"] == 2

        # and each process still keeps users apart
        assert requests.get(f"{a}/api/memories/{memory_id}/", headers=other_headers).status_code == 404
        assert requests.get(f"{b}/api/memories/", headers=other_headers).json()["count"] == 0
    finally:
        for process in processes:
            stop(process)
