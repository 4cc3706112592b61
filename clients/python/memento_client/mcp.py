"""Memento's MCP tools over stdio, for MCP clients that only launch commands:

    MEMENTO_URL=https://memento.example.com MEMENTO_TOKEN=<api token> python -m memento_client.mcp

A bridge, not a second server: every request is forwarded to the server's streamable HTTP endpoint (`/mcp`) with
the official SDK's client, so the tools, their descriptions and their answers are the server's own.
"""

import os
import sys

import anyio
import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.stdio import stdio_server

from memento_client import __version__


def endpoint(url: str) -> str:
    """The MCP endpoint of a Memento server: its base URL + /mcp (a URL already ending in /mcp is kept)."""
    url = url.strip().rstrip("/")
    return url if url.endswith("/mcp") else f"{url}/mcp"


def bridge(upstream: Client) -> Server:
    """A stdio-side server whose tools are `upstream`'s."""

    async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return await upstream.list_tools(cursor=params.cursor if params else None)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await upstream.call_tool(params.name, params.arguments)

    return Server("memento", version=__version__, title="Memento", instructions=upstream.instructions,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(url: str, token: str) -> None:
    """Connect to the server (failing fast on a refused token), then answer on stdin/stdout until it closes."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(30, read=300))
    async with http, Client(streamable_http_client(endpoint(url), http_client=http)) as upstream:
        server = bridge(upstream)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def main() -> None:
    url, token = os.environ.get("MEMENTO_URL", ""), os.environ.get("MEMENTO_TOKEN", "")
    if not url or not token:
        sys.exit("Set MEMENTO_URL (e.g. http://127.0.0.1:8000) and MEMENTO_TOKEN (your API token, from the "
                 "panel's settings page).")
    try:
        anyio.run(serve, url, token)
    except Exception as exc:  # tell the person reading the MCP client's log why the server is not there
        sys.exit(f"memento-mcp: cannot serve {endpoint(url)}: {_reason(exc)}")


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


if __name__ == "__main__":
    main()
