"""The profile API: GET /api/profile/ (sections and text), entries edited, pinned, hidden or written by the user,
and the user's settings. Thin: each action calls one service or selector."""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from core.parsers import JSONParser
from memories.models import Project
from profiles import consolidation, reminder_services, selectors, services
from profiles.models import ConsolidationRun, ProfileEntry, Reminder
from profiles.serializers import (
    ConsolidationRevertSerializer,
    ConsolidationRunSerializer,
    EntryCreateSerializer,
    EntryUpdateSerializer,
    ProfileEntrySerializer,
    ReminderCreateSerializer,
    ReminderQuerySerializer,
    ReminderSerializer,
    ReminderUpdateSerializer,
    ScopeQuerySerializer,
    SettingsSerializer,
)


def query_of(serializer_class, request):
    """The query string checked by `serializer_class`; DRF's own `format` parameter is left to DRF."""
    query = serializer_class(data={k: v for k, v in request.query_params.dict().items() if k != "format"})
    query.is_valid(raise_exception=True)
    return query.validated_data


def project_of(user, project_id):
    """The caller's project with this id, None for none; another user's id is an unknown project (a 400)."""
    if project_id is None:
        return None
    project = Project.objects.filter(owner=user, pk=project_id).first()
    if project is None:
        raise serializers.ValidationError({"project": ["Unknown project."]})
    return project


def profile_data(view: selectors.ProfileView) -> dict:
    return {
        "sections": [{"section": section.value, "title": section.label,
                      "entries": [{**ProfileEntrySerializer(e).data, "shown": e.pk in view.shown} for e in entries]}
                     for section, entries in view.sections],
        "text": view.text, "tokens": view.tokens, "budget": view.budget, "built_at": view.built_at,
    }


class ProfileAPIView(APIView):
    """The caller's profile: entries by section, each with its supporting memories, and the text an agent reads
    (within `budget` tokens: pinned entries first, then by importance and evidence)."""

    @extend_schema(parameters=[ScopeQuerySerializer], responses=dict)
    def get(self, request):
        query = query_of(ScopeQuerySerializer, request)
        project = project_of(request.user, query.get("project"))
        view = selectors.profile_view(owner=request.user, project=project, budget=query.get("budget"))
        return Response(profile_data(view))


class ProfileEntryViewSet(mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.UpdateModelMixin,
                          mixins.ListModelMixin, viewsets.GenericViewSet):
    """The caller's profile entries. PATCH changes text or section (the user's version then wins over rebuilds),
    `pinned`, `hidden` (a deletion rebuilds respect) or `user_edited: false` (back to the memories)."""

    serializer_class = ProfileEntrySerializer
    queryset = ProfileEntry.objects.none()
    parser_classes = [JSONParser]
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_queryset(self):
        return ProfileEntry.objects.filter(owner=self.request.user)

    @extend_schema(request=EntryCreateSerializer, responses={201: ProfileEntrySerializer})
    def create(self, request, *args, **kwargs):
        body = EntryCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        entry = services.entry_create(owner=request.user, project=project_of(request.user, data.get("project")),
                                      section=data["section"], text=data["text"], actor=request.user)
        return Response(ProfileEntrySerializer(entry).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=EntryUpdateSerializer, responses=ProfileEntrySerializer)
    def partial_update(self, request, *args, **kwargs):
        body = EntryUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = services.entry_update(entry=self.get_object(), data=body.validated_data, actor=request.user)
        return Response(ProfileEntrySerializer(entry).data)


class SettingsAPIView(APIView):
    """The caller's settings: the time zone reminders are read in, the profile's token budget."""

    parser_classes = [JSONParser]

    @extend_schema(responses=SettingsSerializer)
    def get(self, request):
        return Response(SettingsSerializer(services.settings_for(request.user)).data)

    @extend_schema(request=SettingsSerializer, responses=SettingsSerializer)
    def patch(self, request):
        body = SettingsSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        return Response(SettingsSerializer(services.settings_update(owner=request.user,
                                                                    data=body.validated_data)).data)


class ReminderViewSet(mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.UpdateModelMixin,
                      mixins.ListModelMixin, viewsets.GenericViewSet):
    """The caller's reminders: GET ?status=open|done|cancelled|all&due_before=<ISO time>, POST {"text": "call mom
    on Friday at 5pm"} (read in the user's time zone), PATCH {"status": "done"|"cancelled"|"open"}."""

    serializer_class = ReminderSerializer
    queryset = Reminder.objects.none()
    parser_classes = [JSONParser]
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_queryset(self):
        return Reminder.objects.filter(owner=self.request.user).select_related("memory")

    @extend_schema(parameters=[ReminderQuerySerializer])
    def list(self, request, *args, **kwargs):
        data = query_of(ReminderQuerySerializer, request)
        found = selectors.reminders_list(owner=request.user, status=data["status"],
                                         due_before=data.get("due_before"))
        page = self.paginate_queryset(found)
        return self.get_paginated_response(ReminderSerializer(page, many=True).data)

    @extend_schema(request=ReminderCreateSerializer, responses={201: ReminderSerializer})
    def create(self, request, *args, **kwargs):
        body = ReminderCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        reminder = reminder_services.reminder_create(owner=request.user, text=body.validated_data["text"],
                                                     actor=request.user)
        return Response(ReminderSerializer(reminder).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=ReminderUpdateSerializer, responses=ReminderSerializer)
    def partial_update(self, request, *args, **kwargs):
        body = ReminderUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        reminder = reminder_services.reminder_set_status(reminder=self.get_object(), actor=request.user,
                                                         **body.validated_data)
        return Response(ReminderSerializer(reminder).data)


class ConsolidationViewSet(mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin,
                           viewsets.GenericViewSet):
    """The caller's consolidation runs, newest first: what each merged or retired, why, how long it took. POST
    starts one (or answers the one running); POST .../revert/ undoes one change ({"change": i}) or all."""

    serializer_class = ConsolidationRunSerializer
    queryset = ConsolidationRun.objects.none()
    parser_classes = [JSONParser]

    def get_queryset(self):
        return ConsolidationRun.objects.filter(owner=self.request.user)

    @extend_schema(request=None, responses={202: ConsolidationRunSerializer})
    def create(self, request, *args, **kwargs):
        run = consolidation.consolidation_start(owner=request.user, trigger="request")
        return Response(ConsolidationRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=ConsolidationRevertSerializer, responses=ConsolidationRunSerializer)
    @action(detail=True, methods=["post"])
    def revert(self, request, pk=None):
        body = ConsolidationRevertSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        done = consolidation.consolidation_revert(run=self.get_object(), change=body.validated_data.get("change"),
                                                  actor=request.user)
        return Response(ConsolidationRunSerializer(done.run).data)
