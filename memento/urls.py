"""Every URL of the app. One DRF router for the API's viewsets, so the browsable API root lists them all."""

from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from accounts import views as account_views
from conversations import views as conversation_views
from conversations.mcp import MCPView
from core.throttles import throttle_sign_in
from documents import views as document_views
from imports import views as import_views
from memento import health
from memento.reembed_api import ReembedView
from memento.schema import SchemaView
from memento.search import MemorySearchView
from memento.signin import TokenView
from memories import views as memory_views
from observability.exposition import metrics_view
from panel.activity_views import admin_activity
from profiles import views as profile_views
from webhooks import views as webhook_views

admin.site.login = throttle_sign_in(admin.site.login)  # per address, as the panel's login and the API's token

router = DefaultRouter()
router.register("memories", memory_views.MemoryViewSet, basename="memory")
router.register("projects", memory_views.ProjectViewSet, basename="project")
router.register("conversations", conversation_views.ConversationViewSet, basename="conversation")
router.register("documents", document_views.DocumentViewSet, basename="document")
router.register("profile/entries", profile_views.ProfileEntryViewSet, basename="profile-entry")
router.register("reminders", profile_views.ReminderViewSet, basename="reminder")
router.register("consolidation", profile_views.ConsolidationViewSet, basename="consolidation")
router.register("tokens", account_views.TokenViewSet, basename="token")
router.register("end-users", account_views.EndUserViewSet, basename="end-user")
router.register("imports", import_views.ImportViewSet, basename="import")
router.register("webhooks", webhook_views.EndpointViewSet, basename="webhook")

urlpatterns = [
    path("healthz", health.healthz, name="healthz"), path("readyz", health.readyz, name="readyz"),  # probes
    path("metrics", metrics_view, name="metrics"),  # Prometheus: loopback or METRICS_TOKEN only (observability/)
    path("admin/activity/", admin.site.admin_view(admin_activity), name="admin-activity"),  # staff: charts
    path("admin/", admin.site.urls),
    path("api/auth/token/", TokenView.as_view(), name="api-token"),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # Swagger UI's init script from a URL of its own (?script=), not inline, so the page runs under the CSP; its
    # page and widgets set inline styles
    path("api/docs/", csp_update({"style-src": ["'unsafe-inline'"]})(
        SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
    # before the router: its memory detail route would take "search" for an id
    path("api/memories/search/", MemorySearchView.as_view(), name="memory-search"),  # joins three apps
    path("api/chunks/search/", document_views.ChunkSearchView.as_view(), name="chunk-search"),
    path("api/profile/", profile_views.ProfileAPIView.as_view(), name="profile"),
    path("api/profile/settings/", profile_views.SettingsAPIView.as_view(), name="profile-settings"),
    path("api/tools/", conversation_views.ToolListView.as_view(), name="tools"),
    path("api/tools/call/", conversation_views.ToolCallView.as_view(), name="tool-call"),
    path("api/admin/reembed/", ReembedView.as_view(), name="reembed"),  # staff: every vector with another model
    path("api/", include("store.urls")),  # the LangGraph store API (langgraph_sdk's client.store)
    path("api/", include(router.urls)),
    re_path(r"^mcp/?$", MCPView.as_view(), name="mcp"),  # Model Context Protocol (streamable HTTP)
    path("", include("accounts.oauth_urls")),  # OAuth 2.1: /.well-known metadata, /oauth/ endpoints
    path("", include("panel.urls")),  # the personal panel, last: it owns the site root
]

# a database outage is a 503 with Retry-After (JSON for the API), whichever middleware or view it reached first
handler500 = "core.outage.server_error"
