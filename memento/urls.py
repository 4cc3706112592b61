from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

from conversations.mcp import MCPView
from memento.search import MemorySearchView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/auth/token/", obtain_auth_token, name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/memories/search/", MemorySearchView.as_view(), name="memory-search"),  # joins three apps
    path("api/", include("memories.urls")),
    path("api/", include("conversations.urls")),
    path("api/", include("documents.urls")),
    path("api/", include("store.urls")),  # the LangGraph store API (langgraph_sdk's client.store)
    re_path(r"^mcp/?$", MCPView.as_view(), name="mcp"),  # Model Context Protocol (streamable HTTP)
    path("", include("panel.urls")),  # the personal panel, last: it owns the site root
]
