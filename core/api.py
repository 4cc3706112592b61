"""API-wide error handling: model validation errors become 400s that name the field, never 500s; an error that
quotes the input quotes it in a form JSON can carry."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_exception_handler


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


def exception_handler(exc, context):
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
