from django.db.models import QuerySet

from webhooks.models import Delivery, Endpoint


def deliveries_of(*, endpoint: Endpoint) -> QuerySet[Delivery]:
    """An endpoint's delivery log, newest first (scoped by its owner too, as every read is)."""
    return Delivery.objects.filter(endpoint=endpoint, owner_id=endpoint.owner_id).order_by("-created_at")
