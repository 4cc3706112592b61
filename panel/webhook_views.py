"""The panel's webhooks pages: the user's endpoints (registered with the same checks as the API; the signing
secret shown once, in the response only), each with its delivery log; switch on or off, rotate the secret,
delete. Writes go through webhooks.services."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from core.events import EVENTS
from panel.forms import add_service_errors
from webhooks import selectors, services
from webhooks.models import Endpoint


class EndpointForm(forms.Form):
    url = forms.CharField(max_length=2000, label="URL", help_text="https://… (public addresses only)")
    description = forms.CharField(max_length=200, required=False)
    events = forms.MultipleChoiceField(choices=[(e, e) for e in EVENTS], required=False,
                                       widget=forms.CheckboxSelectMultiple, help_text="None ticked: every event")


def _endpoints(user):
    return Endpoint.objects.filter(owner=user)


def _list_page(request, *, form=None, created=None, status: int = 200):
    return render(request, "panel/webhooks.html", {
        "endpoints": _endpoints(request.user), "form": form or EndpointForm(), "created": created,
    }, status=status)


@login_required
def webhook_list(request):
    if request.method != "POST":
        return _list_page(request)
    form = EndpointForm(request.POST)
    if form.is_valid():
        try:
            endpoint = services.endpoint_create(owner=request.user, **form.cleaned_data)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            return _list_page(request, created=endpoint)  # the secret is in this response only
    return _list_page(request, form=form, status=400)


def _own(request, pk) -> Endpoint:
    return get_object_or_404(_endpoints(request.user), pk=pk)


def _detail_page(request, endpoint, *, form=None, secret: str = "", status: int = 200):
    deliveries = Paginator(selectors.deliveries_of(endpoint=endpoint), 50).get_page(request.GET.get("page"))
    form = form or EndpointForm(initial={"url": endpoint.url, "events": endpoint.events,
                                         "description": endpoint.description})
    return render(request, "panel/webhook_detail.html", {
        "endpoint": endpoint, "page": deliveries, "form": form, "secret": secret,
    }, status=status)


@login_required
def webhook_detail(request, pk):
    endpoint = _own(request, pk)
    if request.method != "POST":
        return _detail_page(request, endpoint)
    form = EndpointForm(request.POST)
    if form.is_valid():
        try:
            services.endpoint_update(endpoint=endpoint, data=form.cleaned_data)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, "Endpoint saved.")
            return redirect("panel:webhook_detail", pk=endpoint.pk)
    return _detail_page(request, endpoint, form=form, status=400)


@login_required
@require_POST
def webhook_action(request, pk):
    endpoint = _own(request, pk)
    action = request.POST.get("action")
    if action == "delete":
        services.endpoint_delete(endpoint=endpoint)
        messages.success(request, f"Endpoint {endpoint.url} and its delivery log deleted.")
        return redirect("panel:webhooks")
    if action == "rotate":
        rotated = services.endpoint_rotate_secret(endpoint=endpoint)
        return _detail_page(request, rotated, secret=rotated.secret)
    if action in ("on", "off"):
        services.endpoint_update(endpoint=endpoint, data={"active": action == "on"})
        messages.success(request, "Endpoint switched on." if action == "on" else "Endpoint switched off.")
    return redirect("panel:webhook_detail", pk=endpoint.pk)
