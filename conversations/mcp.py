"""The memory tools over the Model Context Protocol, at /mcp on the app's own origin.

The official SDK's low-level `Server` serves the tools of conversations/tools.py (their one registry) through
its streamable HTTP transport, stateless with JSON responses, so any web process can answer any request. The
transport is ASGI and the app is WSGI: `MCPView` authenticates like the REST API (DRF, so the token binds the
database session to its user for row-level security), then hands the request to the SDK with `async_to_sync`. The
SDK's tool handler runs the tool back on the request's own thread (`sync_to_async(thread_sensitive=True)`), that
is on the connection the authentication bound.
"""

import contextvars
import logging
from typing import Any

import anyio
from asgiref.sync import async_to_sync, sync_to_async
from django.core.exceptions import ValidationError
from django.db import DatabaseError
from django.http import HttpResponse
from mcp import types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import ParseError, PermissionDenied
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from conversations import tools
from core.parsers import loads
from memories.tools import MemoryTool

INSTRUCTIONS = (
    "Long-term memory about the user you are talking with (identity comes from the token). Search it before "
    "answering anything that may depend on what you were told before; store lasting facts, preferences and events "
    "as they come up; correct or delete memories when the user says they are wrong."
)

DATABASE_FAILED = "The tool failed on the server; nothing was changed. Try again later."
UNAUTHORIZED, REFUSED = -32001, -32000  # JSON-RPC's implementation-defined server errors
logger = logging.getLogger(__name__)
_user: contextvars.ContextVar = contextvars.ContextVar("mcp_user")  # the token's user, set by MCPView


def mcp_tool(tool: MemoryTool) -> types.Tool:
    return types.Tool(
        name=tool.name, title=tool.title, description=tool.description, input_schema=tool.parameters,
        annotations=types.ToolAnnotations(
            title=tool.title, read_only_hint=tool.read_only,
            destructive_hint=None if tool.read_only else tool.destructive,
            idempotent_hint=None if tool.read_only else tool.idempotent, open_world_hint=False,
        ),
    )


def _problem(exc: ValidationError) -> str:
    errors = exc.message_dict if hasattr(exc, "error_dict") else {"arguments": exc.messages}
    fixes = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in errors.items())
    return f"Invalid arguments. {fixes}"


async def _list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[mcp_tool(tool) for tool in tools.TOOLS.values()])


async def _call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    run = sync_to_async(tools.run_tool, thread_sensitive=True)  # on the request's thread: its bound connection
    try:
        result = await run(user=_user.get(), name=params.name, arguments=params.arguments or {})
    except ValidationError as exc:  # the model can read this and call again with the field fixed
        return types.CallToolResult(content=[types.TextContent(text=_problem(exc))], is_error=True)
    except PermissionDenied as exc:  # a read-only token calling a tool that writes
        return types.CallToolResult(content=[types.TextContent(text=str(exc.detail))], is_error=True)
    except DatabaseError:  # the SDK would send the error's text: PostgreSQL's message with a fragment of the SQL
        logger.exception("MCP tool %s failed in the database", params.name)
        return types.CallToolResult(content=[types.TextContent(text=DATABASE_FAILED)], is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=result.text)], structured_content=result.data)


server = Server("memento", version="1.0.0", title="Memento", instructions=INSTRUCTIONS,
                on_list_tools=_list_tools, on_call_tool=_call_tool)


async def _exchange(scope: dict[str, Any], body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One HTTP exchange through the SDK's transport: (status, headers, body)."""
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    answered = anyio.Event()
    response: dict[str, Any] = {"status": 500, "headers": [], "body": []}

    async def receive():
        if incoming:
            return incoming.pop()
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            response["status"], response["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            response["body"].append(message.get("body", b""))
            if not message.get("more_body"):
                answered.set()

    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return response["status"], response["headers"], b"".join(response["body"])


class MCPView(APIView):
    """Streamable HTTP MCP endpoint. Only API tokens (`Bearer` or `Token`): no browser session, so no CSRF."""

    authentication_classes = [c for c in api_settings.DEFAULT_AUTHENTICATION_CLASSES
                              if not issubclass(c, SessionAuthentication)]
    schema = None  # not part of the REST API's OpenAPI description

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)  # the SDK checks Accept itself

    def handle_exception(self, exc):
        """A refusal (401, 429, ...) still answers in JSON-RPC, so MCP clients show the person why."""
        response = super().handle_exception(exc)
        detail = response.data.get("detail", "Refused.") if isinstance(response.data, dict) else "Refused."
        if response.status_code == 401:
            detail = f"{detail} Send your Memento API token as 'Authorization: Bearer <token>'."
        code = UNAUTHORIZED if response.status_code in (401, 403) else REFUSED
        response.data = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": str(detail)}}
        return response

    def post(self, request):
        try:  # read by the API's JSON reader first: its depth limit (the SDK's own parser stops at 200 levels)
            loads(request.body.decode("utf-8", "replace"))  # and finite numbers only (NaN reached PostgreSQL)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
            "scheme": request.scheme, "path": request.path, "raw_path": request.path.encode(), "root_path": "",
            "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
            "headers": [(name.lower().encode("latin-1"), value.encode("latin-1"))
                        for name, value in request.headers.items() if name.lower() != "authorization"],
            "server": (request.get_host().rsplit(":", 1)[0], int(request.get_port())),
            "client": (request.META.get("REMOTE_ADDR", ""), 0),
        }
        bound = _user.set(request.user)
        try:
            status, headers, body = async_to_sync(_exchange)(scope, request.body)
        finally:
            _user.reset(bound)
        response = HttpResponse(body, status=status)
        for name, value in headers:
            if name.lower() != b"content-length":
                response[name.decode("latin-1")] = value.decode("latin-1")
        return response

    # No GET (a standalone SSE stream) and no DELETE (there are no sessions): each would hold a web thread open.
    # DRF answers them 405, which the protocol allows.
