"""Shapes of the webhooks API. Serializers check shape only; URL and event checks are the services'."""

from rest_framework import serializers

from core.serializers import CharField, StrictSerializer, read_only_meta
from webhooks.models import Delivery, Endpoint


class EndpointSerializer(serializers.ModelSerializer):
    """An endpoint as listed: never its secret (shown once, when created or rotated)."""

    class Meta:
        model = Endpoint
        fields = ["id", "url", "events", "description", "active", "failure_count", "disabled_reason",
                  "disabled_at", "created_at", "updated_at"]
        read_only_fields = fields


class EndpointWithSecretSerializer(EndpointSerializer):
    secret = serializers.CharField(read_only=True, help_text="The signing key: shown this once, keep it safe.")

    Meta = read_only_meta(EndpointSerializer, "secret")


class EndpointWriteSerializer(StrictSerializer):
    url = CharField(max_length=2000, help_text="http(s) URL with a public address (no credentials in it).")
    events = serializers.ListField(child=CharField(max_length=40), required=False, max_length=50,
                                   help_text="Events to send (empty or left out: every event).")
    description = CharField(max_length=200, required=False, allow_blank=True, help_text="A note of yours.")
    active = serializers.BooleanField(required=False, help_text="Send events to it (true switches it on again).")


class DeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = Delivery
        fields = ["id", "event", "status", "attempts", "response_status", "last_error", "next_attempt_at",
                  "created_at", "last_attempt_at", "finished_at", "payload"]
        read_only_fields = fields
