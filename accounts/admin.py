"""Credentials in the admin: tokens by name, prefix and scope (only a digest is stored, and it is not shown);
end users by app and external id; the audit trail, read-only."""

from django.contrib import admin

from accounts.models import ApiToken, AuthEvent, EndUser
from core.admin import ReadOnlyAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are made by their users (panel, API); staff see them and may revoke one (set `revoked_at`)."""

    list_display = ("name", "prefix", "user", "access", "project", "agent_id", "for_end_users", "created_at",
                    "expires_at", "last_used_at", "revoked_at")
    list_filter = ("access", "for_end_users")
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("user", "name", "prefix", "access", "project", "agent_id", "for_end_users", "created_at",
                       "last_used_at", "last_used_from")
    exclude = ("digest",)

    def has_add_permission(self, request) -> bool:
        return False  # a key is shown once, to its maker: staff make none


@admin.register(EndUser)
class EndUserAdmin(admin.ModelAdmin):
    list_display = ("external_id", "owner", "user", "created_at")
    search_fields = ("external_id", "owner__username")
    raw_id_fields = ("owner", "user")


@admin.register(AuthEvent)
class AuthEventAdmin(ReadOnlyAdmin):
    """The audit trail: read-only (staff read it; nobody edits it)."""

    list_display = ("at", "kind", "user", "address", "token_prefix", "detail")
    list_filter = ("kind",)
    search_fields = ("user__username", "token_prefix", "address", "detail")
    date_hierarchy = "at"
