from django.urls import path

from store import views

urlpatterns = [
    path("store/items", views.ItemView.as_view(), name="store-items"),
    path("store/items/search", views.SearchView.as_view(), name="store-search"),
    path("store/namespaces", views.NamespacesView.as_view(), name="store-namespaces"),
    path("store/batch", views.BatchView.as_view(), name="store-batch"),
]
