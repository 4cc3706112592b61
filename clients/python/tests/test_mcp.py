"""The stdio bridge (`python -m memento_client.mcp`), driven by the official `mcp` client over stdio against a small
streamable HTTP MCP server made with the same SDK (no Memento, no Django): what the bridge serves is exactly what
the server behind it says."""

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from mcp import Client, StdioServerParameters, types
from mcp.server import Server
from memento_client.mcp import endpoint

PACKAGE = str(Path(__file__).resolve().parents[1])
TOKEN = "secret-token"
NOTE = types.Tool(
    name="note", title="Note", description="Keep a note.", input_schema={
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
)


def upstream_app(seen: list[str]):
    """A stateless JSON MCP server with one tool that wants `Authorization: Bearer secret-token`."""

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[NOTE])

    async def call_tool(ctx, params):
        text = params.arguments.get("text", "")
        if not text:
            return types.CallToolResult(content=[types.TextContent(text="text: May not be empty.")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=f"Noted: {text}")],
                                    structured_content={"id": 7, "text": text})

    server = Server("upstream", instructions="Notes.", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(stateless_http=True, json_response=True)

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode()
            seen.append(authorization)
            if authorization != f"Bearer {TOKEN}":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await app(scope, receive, send)

    return guarded


@pytest.fixture(scope="module")
def upstream():
    """(base URL, Authorization headers seen) of the server, running in a thread."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    seen: list[str] = []
    server = uvicorn.Server(uvicorn.Config(upstream_app(seen), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the upstream server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", seen
    server.should_exit = True
    thread.join(timeout=10)


def bridge_env(url: str, token: str) -> dict[str, str]:
    return {**os.environ, "MEMENTO_URL": url, "MEMENTO_TOKEN": token,
            "PYTHONPATH": os.pathsep.join(filter(None, [PACKAGE, os.environ.get("PYTHONPATH")]))}


def test_the_bridge_serves_the_upstream_tools_over_stdio(upstream):
    base, seen = upstream
    bridge = StdioServerParameters(command=sys.executable, args=["-m", "memento_client.mcp"],
                                   env=bridge_env(base + "/", TOKEN))

    async def scenario():
        async with Client(bridge, mode="legacy") as client:  # as Claude Desktop and friends connect today
            tools = (await client.list_tools()).tools
            noted = await client.call_tool("note", {"text": "buy oat milk"})
            refused = await client.call_tool("note", {"text": ""})
            return client.instructions, tools, noted, refused

    instructions, tools, noted, refused = asyncio.run(scenario())
    assert instructions == "Notes."
    assert [t.model_dump() for t in tools] == [NOTE.model_dump()]  # descriptions and hints pass through as-is
    assert noted.content[0].text == "Noted: buy oat milk" and noted.structured_content == {"id": 7,
                                                                                        "text": "buy oat milk"}
    assert refused.is_error and refused.content[0].text == "text: May not be empty."
    assert seen and set(seen) == {f"Bearer {TOKEN}"}  # the token goes to the server, as a Bearer token


def test_a_refused_token_stops_the_bridge_with_the_reason(upstream):
    base, _ = upstream
    done = subprocess.run([sys.executable, "-m", "memento_client.mcp"], env=bridge_env(base, "wrong"), input="",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and f"cannot serve {base}/mcp" in done.stderr


def test_the_bridge_needs_a_url_and_a_token():
    env = {k: v for k, v in bridge_env("", "").items() if k not in ("MEMENTO_URL", "MEMENTO_TOKEN")}
    done = subprocess.run([sys.executable, "-m", "memento_client.mcp"], env=env, input="", capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "MEMENTO_URL" in done.stderr and "MEMENTO_TOKEN" in done.stderr


@pytest.mark.parametrize(("url", "expected"), [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/mcp"),
    ("https://memento.example.com/", "https://memento.example.com/mcp"),
    ("https://memento.example.com/mcp", "https://memento.example.com/mcp"),
    (" https://example.com/memento/mcp/ ", "https://example.com/memento/mcp"),
])
def test_endpoint(url, expected):
    assert endpoint(url) == expected
