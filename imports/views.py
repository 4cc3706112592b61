from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, status, viewsets
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from core.idempotency import IdempotentWrites
from imports import services
from imports.models import Import
from imports.serializers import ImportSerializer, ImportUploadSerializer

MULTIPART_SLACK = 64 * 1024  # multipart framing around the file


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The file is too large."
    default_code = "too_large"


class ImportViewSet(IdempotentWrites, mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin,
                    viewsets.GenericViewSet):
    """The caller's imports of chat history and memories from elsewhere (ChatGPT, Claude, Mem0, a LangGraph
    store, JSON Lines). Uploading checks the whole export and answers 202; the items are written in the
    background (watch `status`, `progress` and `counts`)."""

    serializer_class = ImportSerializer
    queryset = Import.objects.none()  # for the schema's types only; get_queryset() scopes
    parser_classes = [MultiPartParser, FormParser]
    idempotent = frozenset({"create"})  # Idempotency-Key (core.idempotency)

    def get_queryset(self):
        return Import.objects.filter(owner=self.request.user)

    @extend_schema(
        request={"multipart/form-data": ImportUploadSerializer},
        responses={
            202: ImportSerializer,
            400: OpenApiResponse(description="Empty or unreadable file, a refused zip, or bad items (each named "
                                             "by position and field; nothing was written)."),
            413: OpenApiResponse(description="Over IMPORT_MAX_BYTES (default 100 MB)."),
        },
    )
    def create(self, request, *args, **kwargs):
        """Upload an export (multipart: `file`, optional `format` and `skip_bad`)."""
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = settings.IMPORT_MAX_BYTES
        if length > limit + MULTIPART_SLACK:
            raise PayloadTooLarge(f"The upload is larger than the limit of {limit:,} bytes.")
        body = ImportUploadSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        upload = data["file"]
        try:
            job = services.import_upload(owner=request.user, raw=upload.read(), filename=upload.name or "",
                                         format=data["format"], skip_bad=data["skip_bad"])
        except services.FileTooLarge as exc:
            raise PayloadTooLarge(str(exc)) from exc
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)
