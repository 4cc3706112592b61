"""Signing in: the token endpoint, the answer to a locked-out sign-in, and API tokens revoked with the password.

django-axes counts failed sign-ins per username and IP address for every login form (panel, admin) and for
POST /api/auth/token/ (settings/security.py, "Sign-in lockout"); this module decides what a locked-out client is told.
"""

from axes.helpers import get_cool_off, get_lockout_message
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.http import JsonResponse
from django.shortcuts import render
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import parsers, renderers, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle
from rest_framework.views import APIView

from accounts.services import token_obtain, tokens_revoke_all


def client_address(request) -> str:
    """AXES_CLIENT_IP_CALLABLE: the address the API throttles count by (REST_FRAMEWORK's NUM_PROXIES)."""
    return BaseThrottle().get_ident(request)


def _retry_after(request) -> int:
    return int(get_cool_off(request).total_seconds())


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: 429 with Retry-After; a page for people (panel and admin login), JSON for the API."""
    seconds = _retry_after(request)
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": get_lockout_message()}, status=429)
    else:
        response = render(request, "panel/locked_out.html", {"minutes": -(-seconds // 60)}, status=429)
    response["Retry-After"] = str(seconds)
    return response


class TokenRequestSerializer(AuthTokenSerializer):
    """DRF's, with the username as long as a username can be: a longer one is a 400 before the lockout records
    it (its table would refuse it with a 500)."""

    username = serializers.CharField(
        label="Username", write_only=True, max_length=get_user_model()._meta.get_field("username").max_length,
    )


class TokenView(APIView):
    """POST username + password: a new read-write API token named "sign-in" (scripts; agents get scoped tokens
    from POST /api/tokens/ or the panel). Each try costs a password hash, so tries are throttled per IP address
    (scope `auth`) and fall under the sign-in lockout; both answer 429 with Retry-After."""

    authentication_classes = ()
    permission_classes = ()
    parser_classes = (parsers.FormParser, parsers.MultiPartParser, parsers.JSONParser)
    renderer_classes = (renderers.JSONRenderer,)
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "auth"

    @extend_schema(request=TokenRequestSerializer, responses=inline_serializer("SignInToken", {
        "token": serializers.CharField(help_text="The key: shown this once, stored only as a digest."),
        "expires_at": serializers.DateTimeField(allow_null=True),
    }))
    def post(self, request, *args, **kwargs):
        serializer = TokenRequestSerializer(data=request.data, context={"request": request})
        try:
            serializer.is_valid(raise_exception=True)
        except ValidationError:
            # axes flags the DRF request it was given; its middleware only sees the Django request underneath
            if getattr(request, "axes_locked_out", False):
                raise Throttled(wait=_retry_after(request), detail=str(get_lockout_message())) from None
            raise
        # a new token each time (only digests are stored, so an earlier key cannot be handed back)
        issued = token_obtain(user=serializer.validated_data["user"], address=client_address(request))
        return Response({"token": issued.key, "expires_at": issued.token.expires_at})


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def revoke_token_on_password_change(sender, instance, created, **kwargs):
    """A new password revokes the user's API tokens: whoever had the old password may have made tokens too.

    set_password() keeps the raw password on the user until save() has told the password validators
    (`_password`, Django's own marker); a hash merely upgraded at login is saved without it and revokes nothing.
    """
    if not created and getattr(instance, "_password", None) is not None:
        tokens_revoke_all(user=instance, reason="password changed")
