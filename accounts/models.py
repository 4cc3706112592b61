"""Credentials and who acts through them: API tokens (hashed, named, scoped), an app's end users, and the audit
trail of sign-ins and token use."""

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """An API token a user made for one agent or script. Only a SHA-256 digest of the key is stored (the key is
    shown once, when it is made); the prefix tells tokens apart in lists. A token may be read-only and may be bound
    to one project and/or one agent: then every request it authenticates sees and writes only that project's or
    agent's rows, in code and by row-level security (core/rls.py). A service token (`for_end_users`) acts for the
    account's end users, named per request (accounts/endusers.py).

    Not under row-level security: it is read before the request has a user (by digest, which is useless to
    whoever reads it)."""

    class Access(models.TextChoices):
        READ = "read", "read-only"
        WRITE = "read_write", "read-write"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens",
                             help_text="Whose token it is: the requests it authenticates act as this user.")
    name = models.CharField(max_length=100, help_text="What the person calls it (the agent or script using it).")
    prefix = models.CharField(max_length=16, db_index=True,
                              help_text="The key's first characters, to tell tokens apart; not enough to use it.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, in hex.")
    access = models.CharField(max_length=10, choices=Access.choices, default=Access.WRITE,
                              help_text="read: GETs, searches and read-only tools; read_write: everything.")
    project = models.ForeignKey("memories.Project", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="api_tokens",
                                help_text="Bound to this project: sees and writes its memories only (deleting "
                                          "the project deletes the token).")
    agent_id = models.CharField(max_length=200, blank=True,
                                help_text="Bound to this agent_id: sees and writes that agent's memories only.")
    for_end_users = models.BooleanField(default=False, help_text="A service token: acts for the account's end "
                                                                 "users, named by the X-Memento-End-User header.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was made.")
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from then on (empty: never).")
    last_used_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Last accepted request (to the minute: not written every time).")
    last_used_from = models.GenericIPAddressField(null=True, blank=True, help_text="Address of that request.")
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="Revoked then: refused from then on.")

    class Meta:
        verbose_name = "API token"
        indexes = [models.Index(fields=["user", "-created_at"], name="apitoken_user_created")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def read_only(self) -> bool:
        return self.access == self.Access.READ

    @property
    def scope_text(self) -> str:
        """The token's scope in words (lists, audit lines)."""
        parts = [self.get_access_display()]
        if self.project_id is not None:
            parts.append(f"project {self.project.name if self.project else self.project_id}")
        if self.agent_id:
            parts.append(f"agent {self.agent_id}")
        if self.for_end_users:
            parts.append("for end users")
        return ", ".join(parts)


class EndUser(models.Model):
    """One end user of an app account, named by the app's own id. Each end user is backed by a Django user of
    their own (`user`), so every owner filter and row-level security policy isolates them exactly like a login;
    the app account (`owner`) only ever acts for them through a service token."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="end_users",
                              help_text="The app account the end user belongs to.")
    external_id = models.CharField(max_length=200, help_text="The app's own id for the end user.")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="end_user",
                                help_text="The user row that owns the end user's memories, messages, documents.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="First seen (made on first use).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "external_id"], name="enduser_unique_per_app")]

    def __str__(self) -> str:
        return self.external_id


class AuthEvent(models.Model):
    """One line of the credentials audit trail: a sign-in (or a failed one), a token made, first used or revoked,
    an OAuth grant, an end user made or erased, a refused token. Shown to the user it concerns (panel) and to
    staff (admin). Reads are under row-level security (a user sees their own lines); anyone may add a line, since
    a failed authentication has no user yet."""

    class Kind(models.TextChoices):
        SIGNED_IN = "signed_in", "signed in"
        SIGN_IN_FAILED = "sign_in_failed", "sign-in failed"
        TOKEN_CREATED = "token_created", "token created"
        TOKEN_FIRST_USED = "token_first_used", "token first used"
        TOKEN_REVOKED = "token_revoked", "token revoked"
        AUTH_FAILED = "auth_failed", "token refused"
        OAUTH_GRANTED = "oauth_granted", "OAuth access granted"
        OAUTH_REVOKED = "oauth_revoked", "OAuth access revoked"
        END_USER_CREATED = "end_user_created", "end user created"
        END_USER_ERASED = "end_user_erased", "end user erased"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="auth_events", help_text="Whom it concerns (empty: unknown, e.g. an "
                                                                   "unknown token).")
    kind = models.CharField(max_length=20, choices=Kind.choices, help_text="What happened.")
    at = models.DateTimeField(auto_now_add=True, db_index=True, help_text="When.")
    address = models.GenericIPAddressField(null=True, blank=True, help_text="The client's address.")
    token_prefix = models.CharField(max_length=16, blank=True, help_text="The token's prefix, if a token was used.")
    detail = models.CharField(max_length=200, blank=True, help_text="Why it was refused, which token or client.")

    class Meta:
        indexes = [models.Index(fields=["user", "-at"], name="authevent_user_at")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} at {self.at:%Y-%m-%d %H:%M}"
