"""Admin for webhooks: staff register, switch and inspect endpoints (through the same services and checks as the
API; the secret is shown once, as a message) and read the delivery log. Staff pages bypass row-level security."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from core.admin import ReadOnlyAdmin, ReadOnlyTabularInline, SearchById
from core.events import EVENTS
from webhooks import addresses, services
from webhooks.models import Delivery, Endpoint


class EndpointForm(forms.ModelForm):
    url = forms.URLField(max_length=2000, assume_scheme="https", help_text="http(s), public addresses only.")
    events = forms.MultipleChoiceField(choices=[(e, e) for e in EVENTS], required=False,
                                       widget=forms.CheckboxSelectMultiple, help_text="None ticked: every event.")

    class Meta:
        model = Endpoint
        fields = ["owner", "url", "events", "description", "active"]

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            addresses.check_url(url)
        except ValidationError as exc:
            raise forms.ValidationError(exc.message_dict["url"]) from None
        return url

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None and cleaned.get("owner") is not None:
            try:
                services.check_room(cleaned["owner"])
            except ValidationError as exc:
                self.add_error(None, exc.message_dict["url"])
        return cleaned


class DeliveryInline(ReadOnlyTabularInline):
    model = Delivery
    fields = ["created_at", "event", "status", "attempts", "response_status", "last_error", "next_attempt_at"]
    readonly_fields = fields
    ordering = ["-created_at"]
    verbose_name_plural = "deliveries (newest first)"


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    form = EndpointForm
    list_display = ["url", "owner", "active", "failure_count", "created_at"]
    list_select_related = ["owner"]
    list_filter = ["active"]
    search_fields = ["url", "description"]
    readonly_fields = ["failure_count", "disabled_reason", "disabled_at", "created_at", "updated_at"]
    raw_id_fields = ["owner"]
    inlines = [DeliveryInline]

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "owner"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        data = {name: form.cleaned_data[name] for name in ("url", "events", "description")}
        if change:
            data["active"] = form.cleaned_data["active"]
            saved = services.endpoint_update(endpoint=Endpoint.objects.get(pk=obj.pk), data=data)
        else:
            # the signing secret is never shown here (a message would keep it in the session): its owner makes
            # a new one in the panel or with POST /api/webhooks/<id>/rotate-secret/
            saved = services.endpoint_create(owner=form.cleaned_data["owner"], **data)
        obj.pk, obj.secret = saved.pk, saved.secret


@admin.register(Delivery)
class DeliveryAdmin(SearchById, ReadOnlyAdmin):
    """The delivery log: read-only (deliveries are written by the worker)."""

    list_display = ["created_at", "event", "endpoint", "owner", "status", "attempts", "response_status"]
    list_select_related = ["endpoint", "owner"]
    list_filter = ["status", "event"]
    search_fields = ["endpoint__url"]
    readonly_fields = [f.name for f in Delivery._meta.fields]
    date_hierarchy = "created_at"
