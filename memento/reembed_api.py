"""`/api/admin/reembed/` (staff only): start a re-embedding with EMBEDDING_MODEL in the worker and see each table's
progress (memento.reembed; the same as `manage.py reembed`)."""

from django.conf import settings
from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.serializers import StrictSerializer
from memento import reembed, tasks
from memories.models import EmbeddingSpace


class ReembedStartSerializer(StrictSerializer):
    all = serializers.BooleanField(default=False, help_text="Re-embed every row, not only those of another model.")
    batch_size = serializers.IntegerField(default=256, min_value=1, max_value=4096, help_text="Rows per call.")


class SpaceSerializer(serializers.ModelSerializer):
    class Meta:
        model = EmbeddingSpace
        fields = ["name", "model", "dimensions", "target_model", "state", "rows_total", "rows_done", "error",
                  "started_at", "updated_at", "finished_at"]


class ReembedStatusSerializer(serializers.Serializer):
    configured_model = serializers.CharField()
    tables = SpaceSerializer(many=True)


def status_payload() -> dict:
    """Every table's row (a table with none yet follows EMBEDDING_MODEL and is shown so)."""
    rows = {space.name: space for space in EmbeddingSpace.objects.all()}
    tables = [rows.get(table.space) or EmbeddingSpace(name=table.space, model=settings.EMBEDDING_MODEL)
              for table in reembed.TABLES]
    return {"configured_model": settings.EMBEDDING_MODEL, "tables": SpaceSerializer(tables, many=True).data}


class ReembedView(APIView):
    """Staff: GET each table's model and re-embedding progress; POST starts a run in the worker (202)."""

    permission_classes = [permissions.IsAdminUser]

    @extend_schema(responses=ReembedStatusSerializer, operation_id="reembed_status")
    def get(self, request):
        return Response(status_payload())

    @extend_schema(request=ReembedStartSerializer, responses={202: ReembedStatusSerializer},
                   operation_id="reembed_start")
    def post(self, request):
        body = ReembedStartSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        with transaction.atomic():
            for table in reembed.TABLES:
                EmbeddingSpace.objects.filter(name=table.space).exclude(state=EmbeddingSpace.State.RUNNING).update(
                    state=EmbeddingSpace.State.QUEUED, error="")
            transaction.on_commit(lambda: tasks.reembed_everything.delay(body.validated_data["all"],
                                                                         body.validated_data["batch_size"]))
        return Response(status_payload(), status=status.HTTP_202_ACCEPTED)
