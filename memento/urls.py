from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/auth/token/", obtain_auth_token, name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("memories.urls")),
    path("api/", include("conversations.urls")),
    path("api/", include("documents.urls")),
    path("api/", include("store.urls")),  # the LangGraph store API (langgraph_sdk's client.store)
    path("", include("panel.urls")),  # the personal panel, last: it owns the site root
]
