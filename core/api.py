"""API-wide error handling: model validation errors become 400s that name the field, never 500s; a body over
DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 in JSON (not Django's HTML page and an error traceback); every 404 says
"Not found." (not "No Reminder matches the given query."); an error that quotes the input quotes it in a form JSON
can carry. The schema class that documents those errors."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError
from django.http import Http404
from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, serializers
from rest_framework.permissions import AllowAny
from rest_framework.views import exception_handler as drf_exception_handler

from core.idempotency import HEADER as IDEMPOTENCY_HEADER
from core.serializers import StrictSerializer


def _printable(value):
    """Error details with lone surrogates (echoed from the input by a message such as '"\\ud800" is not a valid
    choice') spelled as escapes: UTF-8 cannot carry them, so rendering the answer would fail with a 500."""
    if isinstance(value, str):
        return value if value.isascii() else value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def _refused_by_policy(exc) -> bool:
    """A write row-level security refused: a row outside what the session is bound to (a bound token's scope)."""
    cause = getattr(exc, "__cause__", None)
    return (isinstance(exc, DatabaseError) and getattr(cause, "sqlstate", None) == "42501"
            and "row-level security" in str(cause))


class BodyTooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "The request body is larger than the server accepts."
    default_code = "request_too_large"


def body_too_large() -> BodyTooLarge:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return BodyTooLarge(f"The request body is larger than {limit:,} bytes ({limit / 1024 / 1024:.1f} MB), the most "
                        f"the API reads (DATA_UPLOAD_MAX_MEMORY_SIZE). Send less at once, e.g. fewer items per batch.")


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):  # Django's own answer: an HTML 400 page and an error-level traceback
        exc = body_too_large()
    elif isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        exc = exceptions.ParseError(f"{exc} Send fewer form fields or files at once.")
    elif isinstance(exc, Http404):  # get_object_or_404's "No Reminder matches the given query."
        exc = exceptions.NotFound()
    if _refused_by_policy(exc):
        exc = exceptions.PermissionDenied("Outside what this token may reach (its project, agent or end user).")
    if isinstance(exc, DjangoValidationError):
        if hasattr(exc, "error_dict"):
            detail = {field: [str(m) for e in errors for m in e.messages] for field, errors in exc.error_dict.items()}
        else:
            detail = {"detail": exc.messages}
        exc = exceptions.ValidationError(detail)
    response = drf_exception_handler(exc, context)
    if response is not None:
        response.data = _printable(response.data)
    return response


# --- the schema ------------------------------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer):
    """Every refusal other than invalid input: 401, 403, 404, 405, 413, 415, 429, 503 (414 is the web server's page)."""

    detail = serializers.CharField(help_text="What went wrong, for a person to read.")


VALIDATION_ERROR = {
    "type": "object",
    "description": 'Invalid input: each field at fault with what to fix, e.g. {"content": ["May not be blank."]}; '
                   '"detail" for a body that is not valid JSON (or nested too deep).',
    "additionalProperties": True,
}
ERRORS = {
    "400": "Invalid input; the body names each field at fault.",
    "401": "No valid API token (send 'Authorization: Token <key>' or 'Bearer <key>').",
    "403": "Not allowed (a browser session without its CSRF token).",
    "404": "Not found, or not yours (another user's object is reported the same way).",
    "413": "The body is larger than the server accepts.",
    "414": "The URL with its query string is longer than the server reads (8 KB with `serve`): a page of the web "
           "server, not JSON.",
    "409": "The Idempotency-Key was used with another request, or its first request is still being answered.",
    "415": "The body's Content-Type is not one this endpoint reads.",
    "429": "Too many requests; retry after the number of seconds in Retry-After.",
    "503": "A service it depends on (the database, the embedding model) is unavailable; retry later.",
}


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's schema with the errors each operation can answer with (so a client, or schemathesis,
    finds every status code it can get documented): 400 where there is input to check, 401/403 where a token is
    needed, 404 for paths naming an object and for pages, 413/415 where there is a body, 414 where there is a
    query string, 429 and 503 everywhere."""

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if code not in responses:
                body = VALIDATION_ERROR if code == "400" else ErrorSerializer
                responses[code] = self._get_response_for_code(body, code, ["application/json"], direction)
                responses[code]["description"] = ERRORS[code]
        if "414" in responses:  # the web server refuses it before Django sees it
            responses["414"]["content"] = {"text/html": {"schema": {"type": "string"}}}
        if "404" in responses:  # a path no route matches (an id with a slash) gets Django's own page
            responses["404"].setdefault("content", {})["text/html"] = {"schema": {"type": "string"}}
        return responses

    @property
    def _delete_has_body(self) -> bool:
        """Views whose DELETE reads a JSON body (the store's, as LangGraph's server takes it) say so."""
        return self.method == "DELETE" and getattr(self.view, "delete_takes_body", False)

    def _get_request_body(self, direction="request"):
        if not self._delete_has_body:
            return super()._get_request_body(direction)
        self.method = "POST"  # drf-spectacular documents bodies of unsafe methods only
        try:
            return super()._get_request_body(direction)
        finally:
            self.method = "DELETE"

    def _get_paginator(self):
        return super()._get_paginator() if self.method == "GET" else None  # only GET lists are paged

    def _map_basic_serializer(self, serializer, direction):
        """Strict serializers refuse fields they do not know: say so, or a client may send them."""
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictSerializer):
            schema["additionalProperties"] = False
        return schema

    def _idempotent(self) -> bool:
        """A creating write that honours Idempotency-Key (core.idempotency)."""
        names = getattr(self.view, "idempotent", ())
        return self.method in ("POST", "PUT") and (getattr(self.view, "action", None) or self.method.lower()) in names

    def get_override_parameters(self):
        parameters = list(super().get_override_parameters())
        if self._idempotent():
            parameters.append(OpenApiParameter(
                IDEMPOTENCY_HEADER, str, OpenApiParameter.HEADER, required=False,
                description="Any unique string (a UUID): a retry with the same key and body within "
                            "IDEMPOTENCY_TTL_HOURS gets the first answer again (Idempotent-Replayed: true) and "
                            "writes nothing; the same key with another body is a 409."))
        return parameters

    def _error_codes(self) -> list[str]:
        codes = ["429", "503"]
        if self._idempotent():
            codes.append("409")
        has_body = self.method in ("POST", "PUT", "PATCH") or self._delete_has_body
        if has_body or self.method == "GET" and (self._is_list_view() or self.get_filter_backends()
                                                 or self._query_parameters()):
            codes.append("400")
        if not all(issubclass(p, AllowAny) for p in self.view.permission_classes):
            codes += ["401", "403"]
        if "{" in self.path or (self.method == "GET" and self._is_list_view()):
            codes.append("404")
        if has_body:
            codes += ["413", "415"]
        if self.method == "GET" and self._query_parameters():
            codes.append("414")
        return codes

    def _query_parameters(self) -> bool:
        return any(p.get("in") == "query" for p in self._get_parameters())
