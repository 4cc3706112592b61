"""OAuth's URLs, in django-oauth-toolkit's namespace: the metadata documents at the site root, where RFC 8414 and
RFC 9728 clients look (`/.well-known/oauth-authorization-server`, `/.well-known/oauth-protected-resource[/mcp]`),
and the endpoints under /oauth/ (authorize: our consent page; token; revoke_token; register: RFC 7591)."""

from django.urls import include, path
from oauth2_provider import urls as dot_urls
from oauth2_provider import views as dot_views

from accounts.oauth import ConsentView

app_name = "oauth2_provider"

endpoints = [
    path("authorize/", ConsentView.as_view(), name="authorize"),
    path("token/", dot_views.TokenView.as_view(), name="token"),
    path("revoke_token/", dot_views.RevokeTokenView.as_view(), name="revoke-token"),
    *dot_urls.dcr_urlpatterns,
]

urlpatterns = [*dot_urls.metadata_urlpatterns, path("oauth/", include(endpoints))]
