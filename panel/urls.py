from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from core.throttles import throttle_sign_in
from panel import access, activity_views, imports, profile_views, project_views, views, webhook_views

app_name = "panel"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("favicon.ico", views.favicon, name="favicon"),
    # panel/ templates, not registration/: the admin renders registration/* for its own password pages
    path("accounts/login/", throttle_sign_in(auth_views.LoginView.as_view(template_name="panel/login.html")),
         name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", auth_views.PasswordChangeView.as_view(
        template_name="panel/password_change.html", success_url=reverse_lazy("panel:password_change_done"),
    ), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(
        template_name="panel/password_change_done.html",
    ), name="password_change_done"),
    path("activity/", activity_views.activity_page, name="activity"),
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
    path("projects/", project_views.project_list, name="projects"),
    path("projects/new/", project_views.project_create, name="project_create"),
    path("projects/<int:pk>/", project_views.project_edit, name="project_edit"),
    path("profile/", profile_views.profile_page, name="profile"),
    path("profile/add/", profile_views.profile_entry_add, name="profile_entry_add"),
    path("profile/settings/", profile_views.profile_settings, name="profile_settings"),
    path("profile/<int:pk>/", profile_views.profile_entry_action, name="profile_entry_action"),
    path("reminders/", profile_views.reminders_page, name="reminders"),
    path("reminders/add/", profile_views.reminder_add, name="reminder_add"),
    path("reminders/<int:pk>/", profile_views.reminder_status, name="reminder_status"),
    path("consolidation/", profile_views.consolidation_page, name="consolidation"),
    path("consolidation/run/", profile_views.consolidation_start, name="consolidation_start"),
    path("consolidation/<int:pk>/revert/", profile_views.consolidation_revert, name="consolidation_revert"),
    path("agent-view/", profile_views.agent_view, name="agent_view"),
    path("settings/", views.settings_page, name="settings"),
    path("access/tokens/", access.tokens, name="access_tokens"),
    path("access/tokens/<int:pk>/revoke/", access.token_revoke, name="access_token_revoke"),
    path("access/tokens/<int:pk>/replace/", access.token_replace, name="access_token_replace"),
    path("access/oauth/<int:application_id>/revoke/", access.oauth_revoke, name="access_oauth_revoke"),
    path("access/end-users/", access.end_users, name="access_end_users"),
    path("access/end-users/<int:pk>/erase/", access.end_user_erase, name="access_end_user_erase"),
    path("access/activity/", access.activity, name="access_activity"),
    path("webhooks/", webhook_views.webhook_list, name="webhooks"),
    path("webhooks/<int:pk>/", webhook_views.webhook_detail, name="webhook_detail"),
    path("webhooks/<int:pk>/action/", webhook_views.webhook_action, name="webhook_action"),
    path("settings/export/", views.export, name="export"),
    path("settings/import/", views.import_memories, name="import"),
]
