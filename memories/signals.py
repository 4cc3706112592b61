from django.dispatch import receiver
from simple_history.signals import pre_create_historical_record

from memories.models import HistoryAction, Memory

_DEFAULT_ACTION = {"+": HistoryAction.Action.CREATE, "~": HistoryAction.Action.UPDATE, "-": "DELETE"}


@receiver(pre_create_historical_record)
def _record_action(sender, instance, history_instance, **kwargs) -> None:
    """Services say what they did through `instance._history_action`; anything else gets a default."""
    if not isinstance(instance, Memory):
        return
    history_instance.history_action = getattr(instance, "_history_action", None) or _DEFAULT_ACTION.get(
        history_instance.history_type, ""
    )
