"""OAuth 2.1 for /mcp: the official MCP Python client discovers the server (a 401 naming the protected-resource
metadata, then the authorization server's), registers itself (RFC 7591), sends the person to the consent page
with PKCE, exchanges the code and calls a tool, all against a real gunicorn process. The access token is enforced
like an API token: its grant's scope (read only, one project) holds, and revoking it in the panel is immediate."""

import asyncio
import re
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from memories import services as memory_services
from memories.models import Memory
from tests.accounts.test_no_plaintext import dump
from tests.factories import ProjectFactory, UserFactory
from tests.web import free_port, start_gunicorn, stop

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's
REDIRECT = "http://127.0.0.1:9/callback"  # never visited: the consent's redirect is read from its Location


@pytest.fixture(scope="module")
def server(django_db_setup):
    port = free_port()
    process = start_gunicorn(port, threads=4)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


class Storage:
    """The client's token and registration storage, in memory."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def signed_in(base: str, user) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30).text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = session.post(f"{base}/accounts/login/", data={"username": user.username, "password": PASSWORD,
                                                             "csrfmiddlewaretoken": csrf}, timeout=30)
    assert response.ok
    return session


class Person:
    """Stands in for the person at the browser: opens the authorization URL in their signed-in session, checks
    the consent page, chooses (access, project) and allows; the redirect's code is handed to the client."""

    def __init__(self, session: requests.Session, **choices):
        self.session, self.choices, self.redirect = session, choices, None
        self.consent_page = ""

    def consent(self, url: str) -> None:
        page = self.session.get(url, timeout=30)
        assert page.status_code == 200, page.text[:500]
        self.consent_page = page.text
        fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
        fields.update(self.choices, allow="Authorize")
        answer = self.session.post(url, data=fields, allow_redirects=False, timeout=30)
        assert answer.status_code == 302, answer.text[:500]
        self.redirect = answer.headers["Location"]

    async def redirect_handler(self, url: str) -> None:
        await asyncio.to_thread(self.consent, url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.redirect).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                       iss=query.get("iss", [None])[0])


async def call_with_oauth(base: str, person: Person, storage: Storage, tool: str, arguments: dict):
    auth = OAuthClientProvider(
        server_url=f"{base}/mcp", storage=storage, redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
        client_metadata=OAuthClientMetadata(client_name="Test agent", redirect_uris=[REDIRECT],
                                            grant_types=["authorization_code", "refresh_token"],
                                            response_types=["code"], token_endpoint_auth_method="none"),
    )
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            return await client.call_tool(tool, arguments)


def test_the_mcp_client_signs_in_with_oauth_and_calls_a_tool(server):
    user = UserFactory()
    memory_services.memory_create(owner=user, content="Ana keeps bees")
    person, storage = Person(signed_in(server, user)), Storage()
    result = asyncio.run(call_with_oauth(server, person, storage, "search_memories", {"query": "bees"}))
    assert not result.is_error and "Ana keeps bees" in result.content[0].text
    assert "Test agent" in person.consent_page and "Read only" in person.consent_page
    assert storage.client.client_id and storage.tokens.refresh_token  # registered itself; may refresh
    # the token is for the resource it was asked for (RFC 8707): /mcp, not the REST API
    headers = {"Authorization": f"Bearer {storage.tokens.access_token}"}
    assert listed(server, headers).status_code == 200
    assert requests.get(f"{server}/api/memories/", headers=headers, timeout=30).status_code == 401
    text = dump()  # access and refresh tokens are stored as digests only
    assert "oauth2_provider_accesstoken" in text
    assert storage.tokens.access_token not in text and storage.tokens.refresh_token not in text


def listed(server: str, headers: dict) -> requests.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    return requests.post(f"{server}/mcp", json=body, timeout=30, headers={
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25", **headers})


def test_an_oauth_grant_keeps_the_scope_the_person_chose_and_is_revoked_from_the_panel(server):
    user = UserFactory()
    garden = ProjectFactory(owner=user, name="Garden")
    memory_services.memory_create(owner=user, content="Ana keeps bees")
    memory_services.memory_create(owner=user, content="The tomatoes need water", project=garden)
    session = signed_in(server, user)
    person, storage = Person(session, access="read", project=str(garden.pk)), Storage()
    result = asyncio.run(call_with_oauth(server, person, storage, "list_memories", {}))
    assert not result.is_error and "tomatoes" in result.content[0].text and "bees" not in result.content[0].text
    written = asyncio.run(call_with_oauth(server, person, storage, "add_memory", {"content": "Ana likes tea"}))
    assert written.is_error and "read-only" in written.content[0].text
    assert not Memory.objects.filter(content="Ana likes tea").exists()

    headers = {"Authorization": f"Bearer {storage.tokens.access_token}"}
    assert listed(server, headers).status_code == 200
    page = session.get(f"{server}/access/tokens/", timeout=30).text
    assert "Test agent" in page
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    revoke = re.search(r'action="(/access/oauth/\d+/revoke/)"', page).group(1)
    assert session.post(f"{server}{revoke}", data={"csrfmiddlewaretoken": csrf}, timeout=30).ok
    assert listed(server, headers).status_code == 401
    refreshed = requests.post(f"{server}/oauth/token/", timeout=30, data={
        "grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token,
        "client_id": storage.client.client_id})
    assert refreshed.status_code == 400  # the refresh token is revoked too


def test_a_401_points_at_the_metadata_which_describes_the_endpoints(server):
    refused = requests.post(f"{server}/mcp", json={}, timeout=30)
    assert refused.status_code == 401
    challenge = refused.headers["WWW-Authenticate"]
    assert f'resource_metadata="{server}/.well-known/oauth-protected-resource/mcp"' in challenge
    resource = requests.get(f"{server}/.well-known/oauth-protected-resource/mcp", timeout=30).json()
    assert resource["resource"] == f"{server}/mcp" and resource["authorization_servers"] == [server]
    metadata = requests.get(f"{server}/.well-known/oauth-authorization-server", timeout=30).json()
    assert metadata["issuer"] == server
    assert metadata["authorization_endpoint"] == f"{server}/oauth/authorize/"
    assert metadata["token_endpoint"] == f"{server}/oauth/token/"
    assert metadata["registration_endpoint"] == f"{server}/oauth/register/"
    assert metadata["revocation_endpoint"] == f"{server}/oauth/revoke_token/"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    api = requests.get(f"{server}/api/memories/", timeout=30)
    assert api.status_code == 401 and "oauth-protected-resource" in api.headers["WWW-Authenticate"]
