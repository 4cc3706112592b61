from rest_framework.routers import DefaultRouter

from memories import views

router = DefaultRouter()
router.register("memories", views.MemoryViewSet, basename="memory")
router.register("projects", views.ProjectViewSet, basename="project")

urlpatterns = router.urls
