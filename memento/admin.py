"""API tokens in the admin: a token is a password, so the admin shows only its first characters."""

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

SHOWN_CHARACTERS = 6


def token_prefix(key: str) -> str:
    """Enough of a key to tell tokens apart (and match the one a client holds), not enough to use it."""
    return f"{key[:SHOWN_CHARACTERS]}…"


# TokenProxy exists only for DRF's admin; its str() (the whole key) would be the change page's title and
# breadcrumb, the delete page's and every admin log entry's name.
TokenProxy.__str__ = lambda self: token_prefix(self.key)


admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class MaskedTokenAdmin(TokenAdmin):
    """DRF's token admin with the key cut to a prefix in the list and on the change page."""

    list_display = ("key_prefix", "user", "created")
    readonly_fields = ("key_prefix",)

    def get_fields(self, request, obj=None):
        return ("user", "key_prefix") if obj else ("user",)

    @admin.display(description="key")
    def key_prefix(self, token) -> str:
        return token_prefix(token.key)
