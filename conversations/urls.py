from django.urls import path
from rest_framework.routers import DefaultRouter

from conversations import views

router = DefaultRouter()
router.register("conversations", views.ConversationViewSet, basename="conversation")

urlpatterns = [
    path("tools/", views.ToolListView.as_view(), name="tools"),
    path("tools/call/", views.ToolCallView.as_view(), name="tool-call"),
    *router.urls,
]
