from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.db_routing import ReplicaReads
from core.idempotency import IdempotentWrites
from core.parsers import JSONParser
from documents import selectors, services
from documents.models import Document
from documents.serializers import (
    ChunkSearchResponseSerializer,
    ChunkSearchSerializer,
    ChunkSerializer,
    DocumentSerializer,
    DocumentUploadSerializer,
)
from memories.models import Project
from memories.serializers import MemorySerializer

# multipart framing around the file; a body longer than the limit plus this cannot hold an acceptable file
MULTIPART_SLACK = 64 * 1024


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The file is too large."
    default_code = "too_large"


class UnsupportedType(exceptions.APIException):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE
    default_detail = "Unsupported file type."
    default_code = "unsupported_media_type"


class DocumentViewSet(IdempotentWrites, viewsets.ModelViewSet):
    """The caller's documents. Uploading returns 202 at once; parsing, chunking, embedding and memory extraction
    run in the background (watch `status` and `progress`). Deleting erases the chunks and the memories derived
    only from the document."""

    serializer_class = DocumentSerializer
    queryset = Document.objects.none()  # for the schema's types only; get_queryset() scopes
    http_method_names = ["get", "post", "delete", "head", "options"]
    parser_classes = [MultiPartParser, FormParser, JSONParser]
    idempotent = frozenset({"create"})  # Idempotency-Key (core.idempotency)

    def get_queryset(self):
        return Document.objects.filter(owner=self.request.user).select_related("project")

    @extend_schema(
        request={"multipart/form-data": DocumentUploadSerializer},
        responses={
            202: DocumentSerializer,
            400: OpenApiResponse(description="Empty file or bad fields."),
            413: OpenApiResponse(description="Over DOCUMENT_MAX_BYTES (default 20 MB)."),
            415: OpenApiResponse(description="Not PDF, DOCX, HTML, Markdown or plain text."),
        },
    )
    def create(self, request, *args, **kwargs):
        """Upload a file (multipart: `file`, optional `project` and `title`)."""
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > services.max_bytes() + MULTIPART_SLACK:
            raise PayloadTooLarge(f"The upload is larger than the limit of {services.max_bytes() // (1024 * 1024)} MB.")
        body = DocumentUploadSerializer(data=request.data, context=self.get_serializer_context())
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            document = services.document_upload(
                owner=request.user, file=data["file"], project=data.get("project"), title=data.get("title", ""),
            )
        except services.FileTooLarge as exc:
            raise PayloadTooLarge(str(exc)) from exc
        except services.UnsupportedFileType as exc:
            raise UnsupportedType(str(exc)) from exc
        return Response(self.get_serializer(document).data, status=status.HTTP_202_ACCEPTED)

    def perform_destroy(self, instance):
        services.document_delete(document=instance, actor=self.request.user)

    @extend_schema(request=None, responses={202: DocumentSerializer})
    @action(detail=True, methods=["post"])
    def reprocess(self, request, pk=None):
        """Process the document again from its file: chunks and derived memories are replaced."""
        document = services.document_reprocess(document=self.get_object())
        return Response(self.get_serializer(document).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses=ChunkSerializer(many=True))
    @action(detail=True, methods=["get"])
    def chunks(self, request, pk=None):
        """The document's chunks in order."""
        page = self.paginate_queryset(selectors.document_chunks(document=self.get_object()))
        return self.get_paginated_response(ChunkSerializer(page, many=True).data)

    @extend_schema(responses=MemorySerializer(many=True))
    @action(detail=True, methods=["get"])
    def memories(self, request, pk=None):
        """The live memories derived from the document."""
        page = self.paginate_queryset(selectors.document_memories(document=self.get_object()))
        return self.get_paginated_response(
            MemorySerializer(page, many=True, context=self.get_serializer_context()).data
        )


class ChunkSearchView(ReplicaReads, APIView):
    """Ranked search over the caller's document chunks: semantic, keyword or hybrid (default)."""

    replica_actions = frozenset({"post"})

    @extend_schema(request=ChunkSearchSerializer, responses=ChunkSearchResponseSerializer)
    def post(self, request):
        body = ChunkSearchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        project = data.get("project")
        if project is not None:
            project = Project.objects.filter(owner=request.user, pk=project).first()
            if project is None:
                raise serializers.ValidationError({"project": ["Unknown project."]})
        document = data.get("document")
        if document is not None and not Document.objects.filter(owner=request.user, pk=document).exists():
            raise serializers.ValidationError({"document": ["Unknown document."]})
        try:
            results = selectors.chunk_search(
                owner=request.user, query=data["query"], mode=data["mode"], limit=data["limit"],
                threshold=data.get("threshold"), project=project, all_projects=data["all_projects"],
                document=document, created_after=data.get("created_after"),
                created_before=data.get("created_before"),
            )
        except DjangoValidationError as exc:  # pragma: no cover - shapes are checked above
            raise serializers.ValidationError(exc.messages) from exc
        payload = {
            "mode": results.mode, "degraded": results.degraded,
            "results": [{"chunk": r.passage, "score": r.score, "parts": r.parts} for r in results],
        }
        return Response(ChunkSearchResponseSerializer(payload).data)
