from django.http import StreamingHttpResponse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core import rls
from core.db_routing import ReplicaReads
from core.idempotency import IdempotentWrites
from core.parsers import JSONLinesParser, JSONParser
from core.serializers import represent
from memories import batch, portability, selectors, services
from memories.bookkeeping import touch_after_response
from memories.filters import MemoryFilterSet, request_filters  # noqa: F401 (memento.search reads it from here)
from memories.models import Memory, MemoryEvent, Project
from memories.serializers import (
    BatchRequestSerializer,
    BatchResultSerializer,
    BatchSerializer,
    HistoryEntrySerializer,
    MemorySerializer,
    MemoryWriteSerializer,
    ProjectSerializer,
    RevertSerializer,
    WrittenMemorySerializer,
)


class ProjectViewSet(viewsets.ModelViewSet):
    """The caller's projects. Deleting a project erases its project-scoped memories."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.none()  # for the schema's types only; get_queryset() scopes

    def get_queryset(self):
        projects = Project.objects.filter(owner=self.request.user)
        scope = rls.confinement(self.request.user)  # a token bound to a project sees that project only
        return projects if scope is None or scope.project_id is None else projects.filter(pk=scope.project_id)

    def perform_create(self, serializer):
        serializer.instance = services.project_create(owner=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer):
        serializer.instance = services.project_update(project=serializer.instance, data=serializer.validated_data)

    def perform_destroy(self, instance):
        services.project_delete(project=instance)


@extend_schema_view(
    create=extend_schema(
        request=MemoryWriteSerializer,
        responses={201: WrittenMemorySerializer,
                   200: OpenApiResponse(WrittenMemorySerializer, "Upserted, or a duplicate")},
    ),
)
class MemoryViewSet(IdempotentWrites, ReplicaReads, viewsets.ModelViewSet):
    """The caller's memories. POST creates or upserts by (namespace, key); DELETE is a soft delete."""

    idempotent = frozenset({"create", "batch", "import_"})  # Idempotency-Key (core.idempotency)
    replica_actions = frozenset({"list", "retrieve", "history", "chain"})

    serializer_class = MemorySerializer
    queryset = Memory.objects.none()  # for the schema's types only; get_queryset() scopes
    filter_backends = [DjangoFilterBackend]
    filterset_class = MemoryFilterSet  # the list's query string

    def get_queryset(self):
        queryset = Memory.objects.owned_by(self.request.user).select_related("project")
        # a read shows the row; the writes below hand whole rows to the services
        return queryset.for_display() if self.action == "retrieve" else queryset

    def filter_queryset(self, queryset):
        # the query string narrows the list only (the schema says so: filters=False on chain and history); a
        # memory by id is found whatever its state
        return super().filter_queryset(queryset) if self.action == "list" else queryset

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()).for_display())
        return self.get_paginated_response(represent(MemorySerializer, page, many=True))

    def retrieve(self, request, *args, **kwargs):
        memory = self.get_object()
        touch_after_response(memory_ids=[memory.pk], owner_id=request.user.pk, action=MemoryEvent.Action.READ)
        return Response(represent(MemorySerializer, memory))

    def create(self, request, *args, **kwargs):
        serializer = MemoryWriteSerializer(data=request.data, context=self.get_serializer_context())
        serializer.is_valid(raise_exception=True)
        write = services.memory_create(owner=request.user, actor=request.user, **serializer.validated_data)
        # the answer is the schema's WrittenMemorySerializer (the same JSON as MemoryWriteSerializer's, which would
        # build its ~30 fields a second time for it)
        write.memory.duplicate = write.outcome == "duplicate"
        return Response(represent(WrittenMemorySerializer, write.memory),
                        status=status.HTTP_201_CREATED if write.outcome == "created" else status.HTTP_200_OK)

    def perform_update(self, serializer):
        serializer.instance = services.memory_update(
            memory=serializer.instance, data=serializer.validated_data, actor=self.request.user
        )

    def perform_destroy(self, instance):
        services.memory_soft_delete(memory=instance, actor=self.request.user)

    @extend_schema(request=None, responses=MemorySerializer)
    @action(detail=True, methods=["post"])
    def restore(self, request, pk=None):
        memory = services.memory_restore(memory=self.get_object(), actor=request.user)
        return Response(self.get_serializer(memory).data)

    @extend_schema(request=None, responses={204: None})
    @action(detail=True, methods=["post"])
    def forget(self, request, pk=None):
        """Erase the memory and its whole history for good (right to erasure)."""
        services.memory_forget(memory=self.get_object(), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=HistoryEntrySerializer(many=True), filters=False)
    @action(detail=True, methods=["get"], pagination_class=None)
    def history(self, request, pk=None):
        """Every version, newest first, with actor, time, reason and the fields it changed."""
        rows = [
            {
                "history_id": record.history_id,
                "version": record.version,
                "action": record.history_action,
                "actor": record.history_user.get_username() if record.history_user else None,
                "at": record.history_date,
                "reason": record.history_change_reason,
                "changed_fields": changed,
                "content": record.content,
                "is_active": record.is_active,
            }
            for record, changed in selectors.memory_history(memory=self.get_object())
        ]
        return Response(HistoryEntrySerializer(rows, many=True).data)

    @extend_schema(request=RevertSerializer, responses=MemorySerializer)
    @action(detail=True, methods=["post"])
    def revert(self, request, pk=None):
        """Make a new version equal to an earlier one, chosen by history id or version number."""
        body = RevertSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        memory = services.memory_revert(memory=self.get_object(), actor=request.user, **body.validated_data)
        return Response(self.get_serializer(memory).data)

    @extend_schema(responses=MemorySerializer(many=True), filters=False)
    @action(detail=True, methods=["get"], pagination_class=None)
    def chain(self, request, pk=None):
        """The supersession chain this memory belongs to, oldest to newest."""
        chain = selectors.memory_chain(memory=self.get_object())
        return Response(self.get_serializer(chain, many=True).data)

    @extend_schema(request=BatchRequestSerializer, responses={
        201: BatchResultSerializer(many=True), 200: OpenApiResponse(BatchResultSerializer(many=True), "None created")})
    @action(detail=False, methods=["post"])
    def batch(self, request):
        """Up to 1000 creates/upserts in one transaction: all are stored or none."""
        body = BatchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        # one list serializer: its child fields are built once, not once per item
        items = MemoryWriteSerializer(data=body.validated_data["items"], many=True,
                                      context=self.get_serializer_context())
        if not items.is_valid():
            found = items.errors
            pairs = found.items() if isinstance(found, dict) else enumerate(found)
            errors = {str(i): e for i, e in pairs if e}
            raise serializers.ValidationError({"items": errors})
        writes = batch.memory_batch_create(owner=request.user, items=[dict(i) for i in items.validated_data],
                                              actor=request.user, reason="batch via API")
        data = BatchResultSerializer(writes, many=True).data
        created = any(w.outcome == "created" for w in writes)
        return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(responses={(200, "application/jsonl"): OpenApiResponse(description="One memory per line.")})
    @action(detail=False, methods=["get"])
    def export(self, request):
        """All the caller's memories as JSON Lines, each with its versions."""
        lines = portability.memory_export_lines(owner=request.user)
        response = StreamingHttpResponse(lines, content_type="application/jsonl")
        response["Content-Disposition"] = 'attachment; filename="memories.jsonl"'
        return response

    @extend_schema(request={"application/jsonl": {"type": "string"}},
                   responses={200: OpenApiResponse(description="Counts of imported and skipped memories.")})
    @action(detail=False, methods=["post"], url_path="import", parser_classes=[JSONLinesParser, JSONParser])
    def import_(self, request):
        """Memories in the export format (JSON Lines, or a JSON array of the same objects). Importing the same
        file twice changes nothing."""
        if not isinstance(request.data, list):
            raise serializers.ValidationError({"detail": ["Send JSON Lines (application/jsonl) or a JSON array."]})
        return Response(portability.memory_import(owner=request.user, records=request.data, actor=request.user))

