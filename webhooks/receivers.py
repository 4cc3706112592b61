"""Events (core.events) become deliveries to the owner's endpoints subscribed to them."""

from django.dispatch import receiver

from core import events
from webhooks import services


@receiver(events.happened, dispatch_uid="webhooks.deliveries")
def queue_deliveries(sender, *, owner_id: int, event: str, payloads: list[dict], **kwargs) -> None:
    services.deliveries_create(owner_id=owner_id, event=event, payloads=payloads)
