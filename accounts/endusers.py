"""End users of an app account: a service token acts for the end user the request names by the app's own id
(`X-Memento-End-User`), made on first use. Each end user is a Django user of their own, so the request runs as
that user: every owner filter and row-level security policy isolates end users exactly as it isolates logins.
The app account lists and erases them (GET/DELETE /api/end-users/), never reads their data as its own."""

import secrets

from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from rest_framework.exceptions import ValidationError

from accounts import audit
from accounts.models import ApiToken, EndUser
from core import rls
from documents.models import Document
from memories.models import Memory

HEADER = "X-Memento-End-User"
EXTERNAL_ID_MAX = EndUser._meta.get_field("external_id").max_length
MANAGEMENT_PATH = "/api/end-users/"  # where a service token acts as the app account itself (no header)


def _external_id(request) -> str | None:
    value = request.headers.get(HEADER)
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > EXTERNAL_ID_MAX or not value.isprintable():
        raise ValidationError({HEADER: [f"An end user's id: 1 to {EXTERNAL_ID_MAX} printable characters."]})
    return value


def acting_for(*, request, token: ApiToken):
    """The user a service token's request acts as: the named end user (made on first use), with the session
    bound to them (and to the token's agent, when it has one). Without the header, only the end-user
    management endpoints answer (as the app account); anywhere else it is a 400, never the app's own data."""
    external_id = _external_id(request)
    if external_id is None:
        if request.path.startswith(MANAGEMENT_PATH):
            return token.user
        raise ValidationError({HEADER: [f"Required with a service token: the app's id for the end user this "
                                        f"request acts for (or use {MANAGEMENT_PATH} to manage them)."]})
    end_user = end_user_get_or_create(app=token.user, external_id=external_id, address=audit.address_of(request))
    rls.activate(end_user.user_id, agent_id=token.agent_id or None)
    return end_user.user


def end_user_get_or_create(*, app, external_id: str, address: str | None = None) -> EndUser:
    """`app`'s end user named `external_id`, made (with a user row of their own, which cannot sign in) when new.
    Two first requests at once: one makes it, the other finds it."""
    found = EndUser.objects.select_related("user").filter(owner=app, external_id=external_id).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            user = get_user_model().objects.create_user(username=f"enduser-{app.pk}-{secrets.token_hex(8)}")
            end_user = EndUser.objects.create(owner=app, external_id=external_id, user=user)
            audit.record(audit.Kind.END_USER_CREATED, user=app, address=address, detail=external_id)
            return end_user
    except IntegrityError:
        return EndUser.objects.select_related("user").get(owner=app, external_id=external_id)


def end_users_of(*, app) -> list[EndUser]:
    """`app`'s end users, newest first."""
    return list(EndUser.objects.filter(owner=app).select_related("user").order_by("-created_at"))


def end_user_counts(end_user: EndUser) -> dict:
    """How much the end user has stored: their rows are not the app account's, so they are counted bound to the
    end user (then bound back as before)."""
    binding = rls.bound()
    rls.activate(end_user.user_id)
    try:
        return {"memories": Memory.objects.filter(owner_id=end_user.user_id, is_active=True).count(),
                "documents": Document.objects.filter(owner_id=end_user.user_id).count()}
    finally:
        rls.rebind(binding)


def end_user_erase(*, end_user: EndUser, address: str | None = None) -> None:
    """Erase an end user and everything stored for them (memories with their history, conversations, documents
    and their files): the end user asked, or the app is told to forget them. Done bound to the end user, whose
    rows only they may see; the link row first, which is the app account's."""
    binding = rls.bound()
    with transaction.atomic():
        app, external_id, user_id = end_user.owner, end_user.external_id, end_user.user_id
        EndUser.objects.filter(pk=end_user.pk).delete()
        rls.activate(user_id)
        try:
            files = [name for name in Document.objects.filter(owner_id=user_id).values_list("file", flat=True)
                     if name]
            get_user_model().objects.filter(pk=user_id).delete()
            # versions point at their owner without a constraint, and deleting the memories wrote one more each
            Memory.history.filter(owner_id=user_id).delete()
        finally:
            rls.rebind(binding)
        audit.record(audit.Kind.END_USER_ERASED, user=app, address=address, detail=external_id)
        transaction.on_commit(lambda: [default_storage.delete(name) for name in files])

