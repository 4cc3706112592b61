"""The panel's Access pages: API tokens (made, shown once with ready-made snippets, replaced, revoked), an app
account's end users (counts, erase) and the credentials audit trail. Writes go through accounts' services."""

from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts import audit, endusers, oauth, services
from accounts.models import ApiToken, AuthEvent, EndUser
from panel.forms import TokenForm, add_service_errors

ACTIVITY_SHOWN = 100


def _tokens(user):
    return ApiToken.objects.filter(user=user).select_related("project").order_by("revoked_at", "-created_at")


def _tokens_page(request, *, form=None, issued=None, status: int = 200):
    return render(request, "panel/access_tokens.html", {
        "tokens": _tokens(request.user), "form": form or TokenForm(owner=request.user), "issued": issued,
        "base_url": f"{request.scheme}://{request.get_host()}", "now": timezone.now(),
        "oauth_grants": oauth.grants_of(request.user),
    }, status=status)


@login_required
def tokens(request):
    if request.method != "POST":
        return _tokens_page(request)
    form = TokenForm(request.POST, owner=request.user)
    if form.is_valid():
        data = form.cleaned_data
        days = data["expires_in_days"]
        try:
            issued = services.token_create(
                user=request.user, name=data["name"], read_only=data["access"] == "read", project=data["project"],
                agent_id=data["agent_id"].strip(), for_end_users=data["for_end_users"],
                expires_at=timezone.now() + timedelta(days=days) if days else None,
                never_expires=data["never_expires"], address=audit.address_of(request))
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            # the key is in this response only, never in a message, a URL or a log
            return _tokens_page(request, issued=issued)
    return _tokens_page(request, form=form, status=400)


def _own_token(request, pk) -> ApiToken:
    return get_object_or_404(ApiToken, user=request.user, pk=pk)


@login_required
@require_POST
def token_revoke(request, pk):
    token = _own_token(request, pk)
    if services.token_revoke(token=token, address=audit.address_of(request)):
        messages.success(request, f"Token “{token.name}” revoked: agents using it are refused from now on.")
    else:
        messages.info(request, f"Token “{token.name}” was already revoked.")
    return redirect("panel:access_tokens")


@login_required
@require_POST
def token_replace(request, pk):
    """A new key with the same name and scope; the old one is revoked (its agents must get the new key)."""
    old = _own_token(request, pk)
    issued = services.token_replace(token=old, address=audit.address_of(request))
    return _tokens_page(request, issued=issued)


@login_required
@require_POST
def oauth_revoke(request, application_id):
    if oauth.oauth_grant_revoke(user=request.user, application_id=application_id, address=audit.address_of(request)):
        messages.success(request, "Access revoked: the app is refused from now on and must ask you again.")
    else:
        messages.info(request, "That app had no access left.")
    return redirect("panel:access_tokens")


@login_required
def end_users(request):
    rows = [(end_user, endusers.end_user_counts(end_user)) for end_user in endusers.end_users_of(app=request.user)]
    return render(request, "panel/access_end_users.html", {"rows": rows})


@login_required
@require_POST
def end_user_erase(request, pk):
    end_user = get_object_or_404(EndUser, owner=request.user, pk=pk)
    endusers.end_user_erase(end_user=end_user, address=audit.address_of(request))
    messages.success(request, f"End user “{end_user.external_id}” and everything stored for them erased.")
    return redirect("panel:access_end_users")


@login_required
def activity(request):
    events = AuthEvent.objects.filter(user=request.user).order_by("-at")[:ACTIVITY_SHOWN]
    return render(request, "panel/access_activity.html", {"events": events, "shown": ACTIVITY_SHOWN})
