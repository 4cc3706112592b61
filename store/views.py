"""The LangGraph store API, in the shape LangGraph's own server exposes it (so `langgraph_sdk`'s
`client.store.*` works against Memento unchanged), plus `POST /store/batch` for a whole `BaseStore.batch()` in
one round trip. Every endpoint calls `services.store_batch` with operations `ops` has checked."""

from django.core.exceptions import ValidationError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core import grants
from core.db_routing import ReplicaReads
from core.idempotency import IdempotentWrites
from core.parsers import JSONParser
from store import ops
from store.services import StoreUnavailable, store_batch

_namespace = serializers.ListField(child=serializers.CharField())
_TIME = {"type": "string", "format": "date-time"}
NULLABLE_ITEM = {  # GET's answer: an item, or null when there is none
    "type": "object", "nullable": True, "required": ["namespace", "key", "value", "created_at", "updated_at"],
    "properties": {"namespace": {"type": "array", "items": {"type": "string"}}, "key": {"type": "string"},
                   "value": {"type": "object", "additionalProperties": True}, "created_at": _TIME,
                   "updated_at": _TIME},
}
SEARCH_ITEM = inline_serializer("StoreSearchItem", {
    "namespace": _namespace, "key": serializers.CharField(), "value": serializers.JSONField(),
    "created_at": serializers.DateTimeField(), "updated_at": serializers.DateTimeField(),
    "score": serializers.FloatField(allow_null=True),
})


class StoreView(IdempotentWrites, ReplicaReads, APIView):
    parser_classes = [JSONParser]
    # reads (GET of an item, POST of a search or a listing) that may go to a replica: those that refresh no TTL
    replica_actions = frozenset({"get"})

    def reads_only(self, request) -> bool:
        return not getattr(self.read_op(request), "refresh_ttl", True)

    def read_op(self, request) -> ops.Op | None:
        """The operation a read request asks for, or None when its body is not one (the view refuses it)."""
        return None
    renderer_classes = [JSONRenderer]

    def run(self, batch: list[ops.Op]) -> list:
        if any(isinstance(op, ops.Put) for op in batch):
            grants.require_write("put or delete store items")  # a read-only token's batch may only read
        return store_batch(owner=self.request.user, batch=batch)

    def handle_exception(self, exc):
        if isinstance(exc, StoreUnavailable):
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return super().handle_exception(exc)


class ItemView(StoreView):
    """One item: put (an upsert), get, delete (a soft delete of the memory)."""

    idempotent = frozenset({"put"})  # Idempotency-Key (core.idempotency)

    def read_op(self, request) -> ops.Op | None:
        try:
            return ops.get_query(request.query_params)
        except ValidationError:
            return None

    delete_takes_body = True  # for the schema: DELETE reads {namespace, key} from a JSON body

    @extend_schema(operation_id="store_get_item", parameters=[
        OpenApiParameter("namespace", str, required=True, description="Labels joined with '.'"),
        OpenApiParameter("key", str, required=True, pattern=r".+"),
        OpenApiParameter("refresh_ttl", bool, required=False),
    ], responses={200: OpenApiResponse(NULLABLE_ITEM, description="The item, or null when there is none.")})
    def get(self, request):
        item = self.run([ops.get_query(request.query_params)])[0]
        if item is None:
            return HttpResponse(b"null", content_type="application/json")
        return Response(item.as_json(scored=False))

    @extend_schema(operation_id="store_put_item", request=ops.Put, responses={204: None})
    def put(self, request):
        self.run([ops.put(request.data)])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(operation_id="store_delete_item", request=ops.Delete, responses={204: None})
    def delete(self, request):
        self.run([ops.delete(request.data)])
        return Response(status=status.HTTP_204_NO_CONTENT)


class SearchView(StoreView):
    replica_actions = frozenset({"post"})

    def read_op(self, request) -> ops.Op | None:
        try:
            return ops.search(request.data)
        except ValidationError:
            return None

    @extend_schema(operation_id="store_search_items", request=ops.Search, responses=inline_serializer(
        "StoreSearchResult", {"items": serializers.ListField(child=SEARCH_ITEM)}))
    def post(self, request):
        found = self.run([ops.search(request.data)])[0]
        return Response({"items": [item.as_json(scored=True) for item in found]})


class NamespacesView(StoreView):
    replica_actions = frozenset({"post"})

    def reads_only(self, request) -> bool:
        return True

    @extend_schema(operation_id="store_list_namespaces", request=ops.ListNamespaces, responses=inline_serializer(
        "StoreNamespaces", {"namespaces": serializers.ListField(child=_namespace)}))
    def post(self, request):
        found = self.run([ops.list_namespaces(request.data)])[0]
        return Response({"namespaces": [list(namespace) for namespace in found]})


class BatchView(StoreView):
    """Several operations in one round trip, run in order in one transaction; `results[i]` answers `ops[i]`."""

    idempotent = frozenset({"post"})  # Idempotency-Key (core.idempotency): a batch may put

    @extend_schema(operation_id="store_batch", request=ops.Batch, responses={200: OpenApiTypes.OBJECT})
    def post(self, request):
        batch = ops.batch(request.data)
        results = self.run(batch)
        return Response({"results": [_result(op, result) for op, result in zip(batch, results, strict=True)]})


def _result(op: ops.Op, result):
    if isinstance(op, ops.Get):
        return None if result is None else result.as_json(scored=False)
    if isinstance(op, ops.Search):
        return [item.as_json(scored=True) for item in result]
    if isinstance(op, ops.ListNamespaces):
        return [list(namespace) for namespace in result]
    return None
