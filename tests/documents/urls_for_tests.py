"""The project's URLs plus the documents API, for as long as memento/urls.py does not include it yet."""

from django.urls import include, path

from memento.urls import urlpatterns as project_urlpatterns

_included = any("documents.urls" in str(getattr(p, "urlconf_name", "")) for p in project_urlpatterns)
urlpatterns = [*project_urlpatterns, *([] if _included else [path("api/", include("documents.urls"))])]
