"""OAuth 2.1 for /mcp and the API, with django-oauth-toolkit: authorization code with PKCE (S256 only), refresh
tokens (rotated), revocation, authorization-server and protected-resource metadata, dynamic client registration
(the MCP authorization specification's discovery and registration), tokens stored as digests only (RFC 9700).

What is ours: the consent page in the panel's style, where the person narrows what a client asked for (read only;
one project), carried in the grant's scopes (`read`, `write`, `project:<id>`); the access token's lookup, which
binds the database session exactly like an API token's (accounts/authentication.py); and revocation from the
panel."""

import re
from urllib.parse import urlsplit

from django.db import transaction
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.views import AuthorizationView

from accounts import audit
from memories.models import Project

PROJECT_SCOPE = re.compile(r"project:([1-9][0-9]{0,18})")
READ, WRITE = "read", "write"


def project_of(scopes: list[str]) -> int | None:
    for scope in scopes:
        match = PROJECT_SCOPE.fullmatch(scope)
        if match:
            return int(match.group(1))
    return None


class Validator(OAuth2Validator):
    """DOT's validator, with a grant's project scope (`project:<id>`, added by the consent page) allowed."""

    def validate_scopes(self, client_id, scopes, client, request, *args, **kwargs):
        plain = [scope for scope in scopes if not PROJECT_SCOPE.fullmatch(scope)]
        if len(scopes) - len(plain) > 1:
            return False
        return super().validate_scopes(client_id, plain, client, request, *args, **kwargs)


class ConsentView(AuthorizationView):
    """The authorization endpoint's consent page, in the panel's style: which client, which access (the person
    may grant read only), which project (or every project). The form posts to this page and its answer redirects
    to the client, so the page's Content-Security-Policy lets forms go to the client's redirect address too."""

    template_name = "oauth2_provider/authorize.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["projects"] = Project.objects.filter(owner=self.request.user).order_by("name")
        return context

    def render_to_response(self, context, **kwargs):
        response = super().render_to_response(context, **kwargs)
        redirect_uri = (context.get("form").initial.get("redirect_uri") if context.get("form") else None) or ""
        parts = urlsplit(redirect_uri)
        if parts.scheme and parts.netloc:
            response._csp_update = {"form-action": [f"{parts.scheme}://{parts.netloc}"]}
        return response

    def form_valid(self, form):
        if form.cleaned_data.get("allow"):
            scopes = [s for s in form.cleaned_data.get("scope", "").split() if not PROJECT_SCOPE.fullmatch(s)]
            if self.request.POST.get("access") == "read":
                scopes = [s for s in scopes if s != WRITE] or [READ]
            project = self.request.POST.get("project", "")
            if project:
                owned = Project.objects.filter(owner=self.request.user, pk=project if project.isdigit() else 0)
                if not owned.exists():
                    form.add_error(None, "Unknown project.")
                    return self.form_invalid(form)
                scopes.append(f"project:{project}")
            form.cleaned_data["scope"] = " ".join(scopes)
            audit.record(audit.Kind.OAUTH_GRANTED, user=self.request.user, address=audit.address_of(self.request),
                         detail=f"client {form.cleaned_data.get('client_id', '')[:60]}: {' '.join(scopes)}")
        return super().form_valid(form)


def grants_of(user) -> list[dict]:
    """The clients `user` has let in, with their live tokens' scopes and expiry, one row per client."""
    clients: dict = {}
    for token in get_access_token_model().objects.filter(user=user).select_related("application"):
        row = clients.setdefault(token.application_id, {"application": token.application, "scopes": set(),
                                                        "expires": token.expires})
        row["scopes"] |= set(token.scope.split())
        row["expires"] = max(row["expires"], token.expires)
    for token in get_refresh_token_model().objects.filter(user=user, revoked__isnull=True).select_related(
            "application"):
        clients.setdefault(token.application_id, {"application": token.application, "scopes": set(),
                                                  "expires": None})
    return [{**row, "scopes": " ".join(sorted(row["scopes"]))} for row in clients.values()]


def oauth_grant_revoke(*, user, application_id: int, address: str | None = None) -> bool:
    """Revoke every token `user` gave the client: its access tokens stop working at once and its refresh tokens
    can no longer make new ones."""
    with transaction.atomic():
        refresh = list(get_refresh_token_model().objects.filter(user=user, application_id=application_id,
                                                                revoked__isnull=True))
        for token in refresh:
            token.revoke()
        deleted, _ = get_access_token_model().objects.filter(user=user, application_id=application_id).delete()
        if refresh or deleted:
            audit.record(audit.Kind.OAUTH_REVOKED, user=user, address=address,
                         detail=f"application {application_id}")
    return bool(refresh or deleted)

