"""Every URL of the app. One DRF router for the API's viewsets, so the browsable API root lists them all."""

from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from conversations import views as conversation_views
from conversations.mcp import MCPView
from documents import views as document_views
from imports import views as import_views
from memento.search import MemorySearchView
from memento.signin import TokenView
from memories import views as memory_views

router = DefaultRouter()
router.register("memories", memory_views.MemoryViewSet, basename="memory")
router.register("projects", memory_views.ProjectViewSet, basename="project")
router.register("conversations", conversation_views.ConversationViewSet, basename="conversation")
router.register("documents", document_views.DocumentViewSet, basename="document")
router.register("imports", import_views.ImportViewSet, basename="import")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/auth/token/", TokenView.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI's init script from a URL of its own (?script=), not inline, so the page runs under the CSP; its
    # page and widgets set inline styles
    path("api/docs/", csp_update({"style-src": ["'unsafe-inline'"]})(
        SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
    # before the router: its memory detail route would take "search" for an id
    path("api/memories/search/", MemorySearchView.as_view(), name="memory-search"),  # joins three apps
    path("api/chunks/search/", document_views.ChunkSearchView.as_view(), name="chunk-search"),
    path("api/tools/", conversation_views.ToolListView.as_view(), name="tools"),
    path("api/tools/call/", conversation_views.ToolCallView.as_view(), name="tool-call"),
    path("api/", include("store.urls")),  # the LangGraph store API (langgraph_sdk's client.store)
    path("api/", include(router.urls)),
    re_path(r"^mcp/?$", MCPView.as_view(), name="mcp"),  # Model Context Protocol (streamable HTTP)
    path("", include("panel.urls")),  # the personal panel, last: it owns the site root
]

# a database outage is a 503 with Retry-After (JSON for the API), whichever middleware or view it reached first
handler500 = "core.outage.server_error"
