from django.urls import path
from rest_framework.routers import DefaultRouter

from documents import views

router = DefaultRouter()
router.register("documents", views.DocumentViewSet, basename="document")

urlpatterns = [
    path("chunks/search/", views.ChunkSearchView.as_view(), name="chunk-search"),
    *router.urls,
]
