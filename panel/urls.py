from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from panel import imports, views

app_name = "panel"

urlpatterns = [
    path("", views.overview, name="overview"),
    # panel/ templates, not registration/: the admin renders registration/* for its own password pages
    path("accounts/login/", auth_views.LoginView.as_view(template_name="panel/login.html"), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", auth_views.PasswordChangeView.as_view(
        template_name="panel/password_change.html", success_url=reverse_lazy("panel:password_change_done"),
    ), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(
        template_name="panel/password_change_done.html",
    ), name="password_change_done"),
    path("memories/", views.memory_list, name="memory_list"),
    path("memories/new/", views.memory_create, name="memory_create"),
    path("memories/<uuid:pk>/", views.memory_detail, name="memory_detail"),
    path("memories/<uuid:pk>/edit/", views.memory_edit, name="memory_edit"),
    path("memories/<uuid:pk>/delete/", views.memory_delete, name="memory_delete"),
    path("memories/<uuid:pk>/restore/", views.memory_restore, name="memory_restore"),
    path("memories/<uuid:pk>/forget/", views.memory_forget, name="memory_forget"),
    path("memories/<uuid:pk>/revert/", views.memory_revert, name="memory_revert"),
    path("documents/", views.document_list, name="document_list"),
    path("documents/<uuid:pk>/", views.document_detail, name="document_detail"),
    path("documents/<uuid:pk>/status/", views.document_status, name="document_status"),
    path("documents/<uuid:pk>/delete/", views.document_delete, name="document_delete"),
    path("imports/", imports.import_list, name="import_list"),
    path("imports/<uuid:pk>/", imports.import_detail, name="import_detail"),
    path("imports/<uuid:pk>/status/", imports.import_status, name="import_status"),
    path("conversations/", views.conversation_list, name="conversation_list"),
    path("conversations/<uuid:pk>/", views.conversation_detail, name="conversation_detail"),
    path("settings/", views.settings_page, name="settings"),
    path("settings/token/", views.token, name="token"),
    path("settings/export/", views.export, name="export"),
    path("settings/import/", views.import_memories, name="import"),
]
