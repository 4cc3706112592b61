"""The credentials API: /api/tokens/ (list, make, replace, revoke) and /api/end-users/ (list, erase). Thin: one
service per action."""

from datetime import timedelta

from django.utils import timezone
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts import audit, endusers, services
from accounts.filters import EndUserFilterSet
from accounts.models import ApiToken, EndUser
from accounts.serializers import EndUserSerializer, IssuedTokenSerializer, TokenCreateSerializer, TokenSerializer
from core.grants import WriteAccess


class ManagesCredentials(permissions.BasePermission):
    """Credentials are managed by the account itself: a browser session, or a token that is neither bound (to a
    project or an agent: it would make itself a wider one) nor acting for an end user."""

    message = "Only a session or an unbound token of the account itself manages its tokens and end users."

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if token is None:  # a browser session
            return True
        if not isinstance(token, ApiToken):  # an OAuth client acts on memories, never on credentials
            return False
        unbound = token.project_id is None and not token.agent_id
        return unbound and request.user.pk == token.user_id


class TokenViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                   viewsets.GenericViewSet):
    """The caller's API tokens. POST makes one (the key is in that response only); DELETE revokes one (refused
    from the next request on); POST {id}/replace/ makes a new key with the same scope and revokes the old."""

    serializer_class = TokenSerializer
    queryset = ApiToken.objects.none()  # for the schema's types only; get_queryset() scopes
    permission_classes = [permissions.IsAuthenticated, WriteAccess, ManagesCredentials]

    def get_queryset(self):
        return ApiToken.objects.filter(user=self.request.user).select_related("project").order_by("-created_at")

    @extend_schema(request=TokenCreateSerializer, responses={201: IssuedTokenSerializer})
    def create(self, request):
        serializer = TokenCreateSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        days = data.get("expires_in_days")
        issued = services.token_create(
            user=request.user, name=data["name"], read_only=data["access"] == ApiToken.Access.READ,
            project=data.get("project"), agent_id=data["agent_id"], for_end_users=data["for_end_users"],
            expires_at=timezone.now() + timedelta(days=days) if days else None,
            never_expires=data["never_expires"], address=audit.address_of(request))
        return Response(_issued(issued), status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={201: IssuedTokenSerializer})
    @action(detail=True, methods=["post"])
    def replace(self, request, pk=None):
        issued = services.token_replace(token=self.get_object(), address=audit.address_of(request))
        return Response(_issued(issued), status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance):
        services.token_revoke(token=instance, address=audit.address_of(self.request))


def _issued(issued: services.Issued) -> dict:
    issued.token.key = issued.key
    return IssuedTokenSerializer(issued.token).data


class EndUserViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                     viewsets.GenericViewSet):
    """The app account's end users (made on first use by a service token's X-Memento-End-User header). DELETE
    erases one and everything stored for them."""

    serializer_class = EndUserSerializer
    queryset = EndUser.objects.none()
    permission_classes = [permissions.IsAuthenticated, WriteAccess, ManagesCredentials]

    filter_backends = [DjangoFilterBackend]
    filterset_class = EndUserFilterSet  # ?external_id=

    def get_queryset(self):
        return EndUser.objects.filter(owner=self.request.user).order_by("-created_at")

    def perform_destroy(self, instance):
        endusers.end_user_erase(end_user=instance, address=audit.address_of(self.request))
