from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from memories import services
from memories.models import Memory, Project
from memories.serializers import MemorySerializer, ProjectSerializer


class ProjectViewSet(viewsets.ModelViewSet):
    """The caller's projects."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.none()  # for the schema's types only; get_queryset() scopes

    def get_queryset(self):
        return Project.objects.filter(owner=self.request.user)

    def perform_create(self, serializer):
        serializer.instance = services.project_create(owner=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer):
        serializer.instance = services.project_update(project=serializer.instance, data=serializer.validated_data)


class MemoryViewSet(viewsets.ModelViewSet):
    """The caller's memories. DELETE is a soft delete; `restore` brings a memory back."""

    serializer_class = MemorySerializer
    queryset = Memory.objects.none()  # for the schema's types only; get_queryset() scopes

    def get_queryset(self):
        return Memory.objects.owned_by(self.request.user).select_related("project")

    def perform_create(self, serializer):
        serializer.instance = services.memory_create(
            owner=self.request.user, actor=self.request.user, **serializer.validated_data
        )

    def perform_update(self, serializer):
        serializer.instance = services.memory_update(
            memory=serializer.instance, data=serializer.validated_data, actor=self.request.user
        )

    def perform_destroy(self, instance):
        services.memory_soft_delete(memory=instance, actor=self.request.user)

    @action(detail=True, methods=["post"])
    def restore(self, request, pk=None):
        memory = services.memory_restore(memory=self.get_object(), actor=request.user)
        return Response(self.get_serializer(memory).data, status=status.HTTP_200_OK)
