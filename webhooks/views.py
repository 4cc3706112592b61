from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.settings import api_settings

from core import rls
from webhooks import selectors, services
from webhooks.models import Endpoint
from webhooks.serializers import (
    DeliverySerializer,
    EndpointSerializer,
    EndpointWithSecretSerializer,
    EndpointWriteSerializer,
)


class Unconfined(BasePermission):
    """An endpoint receives every event of its owner's: a token bound to one project or agent may not manage
    them (it would see other projects' memories through them)."""

    message = "A token bound to a project or an agent cannot manage webhooks (they receive all your events)."

    def has_permission(self, request, view) -> bool:
        return rls.confinement(request.user) is None


@extend_schema_view(
    create=extend_schema(request=EndpointWriteSerializer, responses={201: EndpointWithSecretSerializer}),
    partial_update=extend_schema(request=EndpointWriteSerializer, responses={200: EndpointSerializer}),
)
class EndpointViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                      viewsets.GenericViewSet):
    """The caller's webhook endpoints: each is POSTed the events it subscribes to, signed with its secret (shown
    once, on creation and rotation). Private and loopback addresses are refused (a 400 naming `url`)."""

    serializer_class = EndpointSerializer
    queryset = Endpoint.objects.none()  # for the schema's types only; get_queryset() scopes
    permission_classes = [*api_settings.DEFAULT_PERMISSION_CLASSES, Unconfined]

    def get_queryset(self):
        return Endpoint.objects.filter(owner=self.request.user)

    def create(self, request, *args, **kwargs):
        body = EndpointWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        data.pop("active", None)  # a new endpoint is active
        endpoint = services.endpoint_create(owner=request.user, **data)
        return Response(EndpointWithSecretSerializer(endpoint).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, *args, **kwargs):
        body = EndpointWriteSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        endpoint = services.endpoint_update(endpoint=self.get_object(), data=dict(body.validated_data))
        return Response(EndpointSerializer(endpoint).data)

    def perform_destroy(self, instance):
        services.endpoint_delete(endpoint=instance)

    @extend_schema(request=None, responses={200: EndpointWithSecretSerializer})
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, pk=None):
        """A new signing secret (shown this once); the old one stops signing at once."""
        endpoint = services.endpoint_rotate_secret(endpoint=self.get_object())
        return Response(EndpointWithSecretSerializer(endpoint).data)

    @extend_schema(responses={200: DeliverySerializer(many=True)})
    @action(detail=True, methods=["get"])
    def deliveries(self, request, pk=None):
        """The endpoint's delivery log, newest first: status, attempts, last error, next retry."""
        page = self.paginate_queryset(selectors.deliveries_of(endpoint=self.get_object()))
        return self.get_paginated_response(DeliverySerializer(page, many=True).data)
