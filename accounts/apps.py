from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Credentials: hashed, scoped API tokens, an app's end users, the sign-in and token audit trail."""

    name = "accounts"
    verbose_name = "Accounts and credentials"
