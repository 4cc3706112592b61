"""The LangGraph store API, in the shape LangGraph's own server exposes it (so `langgraph_sdk`'s
`client.store.*` works against Memento unchanged), plus `POST /store/batch` for a whole `BaseStore.batch()` in
one round trip. Every endpoint calls `services.store_batch` with operations `ops` has checked."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core.parsers import JSONParser
from store import ops
from store.services import StoreUnavailable, store_batch

_namespace = serializers.ListField(child=serializers.CharField())
ITEM = inline_serializer("StoreItem", {
    "namespace": _namespace, "key": serializers.CharField(), "value": serializers.JSONField(),
    "created_at": serializers.DateTimeField(), "updated_at": serializers.DateTimeField(),
})
SEARCH_ITEM = inline_serializer("StoreSearchItem", {
    "namespace": _namespace, "key": serializers.CharField(), "value": serializers.JSONField(),
    "created_at": serializers.DateTimeField(), "updated_at": serializers.DateTimeField(),
    "score": serializers.FloatField(allow_null=True),
})
PUT_BODY = inline_serializer("StorePut", {
    "namespace": _namespace, "key": serializers.CharField(), "value": serializers.JSONField(),
    "index": serializers.JSONField(required=False, help_text="null: the default fields; false: no vector; "
                                                             'or field paths such as ["text", "a.b", "arr[*].x"]'),
    "ttl": serializers.FloatField(required=False, allow_null=True, help_text="Minutes; reads refresh it."),
})
DELETE_BODY = inline_serializer("StoreDelete", {"namespace": _namespace, "key": serializers.CharField()})
SEARCH_BODY = inline_serializer("StoreSearch", {
    "namespace_prefix": _namespace, "filter": serializers.JSONField(required=False),
    "limit": serializers.IntegerField(required=False), "offset": serializers.IntegerField(required=False),
    "query": serializers.CharField(required=False, allow_null=True),
    "refresh_ttl": serializers.BooleanField(required=False),
    "threshold": serializers.FloatField(required=False, allow_null=True,
                                        help_text="Minimum cosine similarity (none by default)."),
})
NAMESPACES_BODY = inline_serializer("StoreListNamespaces", {
    "prefix": _namespace, "suffix": _namespace, "max_depth": serializers.IntegerField(required=False),
    "limit": serializers.IntegerField(required=False), "offset": serializers.IntegerField(required=False),
})
BATCH_BODY = inline_serializer("StoreBatch", {"ops": serializers.ListField(
    child=serializers.JSONField(), help_text='Each {"op": "get"|"put"|"delete"|"search"|"list_namespaces", '
                                             "...the fields of that endpoint's body}.")})


class StoreView(APIView):
    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer]

    def run(self, batch: list[ops.Op]) -> list:
        return store_batch(owner=self.request.user, batch=batch)

    def handle_exception(self, exc):
        if isinstance(exc, StoreUnavailable):
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return super().handle_exception(exc)


class ItemView(StoreView):
    """One item: put (an upsert), get, delete (a soft delete of the memory)."""

    @extend_schema(operation_id="store_get_item", parameters=[
        OpenApiParameter("namespace", str, required=True, description="Labels joined with '.'"),
        OpenApiParameter("key", str, required=True),
        OpenApiParameter("refresh_ttl", bool, required=False),
    ], responses={200: OpenApiResponse(ITEM, description="The item, or null when there is none.")})
    def get(self, request):
        item = self.run([ops.get_query(request.query_params)])[0]
        if item is None:
            return HttpResponse(b"null", content_type="application/json")
        return Response(item.as_json(scored=False))

    @extend_schema(operation_id="store_put_item", request=PUT_BODY, responses={204: None})
    def put(self, request):
        self.run([ops.put(request.data)])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(operation_id="store_delete_item", request=DELETE_BODY, responses={204: None})
    def delete(self, request):
        self.run([ops.delete(request.data)])
        return Response(status=status.HTTP_204_NO_CONTENT)


class SearchView(StoreView):
    @extend_schema(operation_id="store_search_items", request=SEARCH_BODY, responses=inline_serializer(
        "StoreSearchResult", {"items": serializers.ListField(child=SEARCH_ITEM)}))
    def post(self, request):
        found = self.run([ops.search(request.data)])[0]
        return Response({"items": [item.as_json(scored=True) for item in found]})


class NamespacesView(StoreView):
    @extend_schema(operation_id="store_list_namespaces", request=NAMESPACES_BODY, responses=inline_serializer(
        "StoreNamespaces", {"namespaces": serializers.ListField(child=_namespace)}))
    def post(self, request):
        found = self.run([ops.list_namespaces(request.data)])[0]
        return Response({"namespaces": [list(namespace) for namespace in found]})


class BatchView(StoreView):
    """Several operations in one round trip, run in order in one transaction; `results[i]` answers `ops[i]`."""

    @extend_schema(operation_id="store_batch", request=BATCH_BODY, responses={200: OpenApiTypes.OBJECT})
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
