"""The profile and reminder tools an agent calls, declared like the memory tools (memories.tools.tool) and served
with them by conversations/tools.py (OpenAI function-calling tools and MCP)."""

from django.core.exceptions import ValidationError

from memories.tools import MemoryTool, ToolResult, as_of_arg, tool
from profiles import reminder_services, selectors
from profiles.models import Reminder

TOOLS: dict[str, MemoryTool] = {}


@tool(TOOLS, "get_profile", title="What is known about the user, in short", read_only=True, properties={
    "budget": {"type": "integer", "minimum": 16, "maximum": 4000,
               "description": "Token budget of the text (default: the user's setting, 300)."},
}, description=(
    "A short structured profile of the user built from their current memories: identity and contact, home, work "
    "and study, family and relationships, health and restrictions, preferences and interests, goals, routines. "
    "Each entry names the memories that support it. Call it at the start of a conversation."))
def get_profile(user, args):
    view = selectors.profile_view(owner=user, budget=args.get("budget"))
    return ToolResult(view.text or "Nothing is known about the user yet.", {
        "text": view.text, "tokens": view.tokens, "budget": view.budget,
        "sections": [{"section": s.value, "title": s.label, "entries": [
            {"id": e.pk, "text": e.text, "evidence_count": e.evidence_count, "shown": e.pk in view.shown,
             "memory_ids": [str(m) for m in e.memory_ids], "pinned": e.pinned,
             "last_confirmed": e.last_confirmed.isoformat() if e.last_confirmed else None} for e in entries]}
            for s, entries in view.sections],
    })


REMINDER_STATES = [*Reminder.Status.values, "all"]


def _reminder_data(reminder: Reminder) -> dict:
    return {"id": reminder.pk, "task": reminder.task, "status": reminder.status,
            "due_at": reminder.due_at.isoformat() if reminder.due_at else None, "memory_id": str(reminder.memory_id)}


@tool(TOOLS, "list_reminders", title="The user's reminders", read_only=True, properties={
    "status": {"type": "string", "enum": REMINDER_STATES, "description": "Which ones (default open)."},
    "due_before": {"type": "string", "maxLength": 64, "description": "An ISO date or time: only those due by then."},
}, description=(
    "The user's reminders and appointments (what they asked to be reminded of), soonest first, with their due "
    "times. Open ones by default; overdue ones are open ones due in the past."))
def list_reminders(user, args):
    due_before = None
    if "due_before" in args:
        try:
            due_before = as_of_arg({"as_of": args["due_before"]})
        except ValidationError as exc:
            raise ValidationError({"due_before": exc.message_dict["as_of"]}) from None
    found = list(selectors.reminders_list(owner=user, status=args.get("status", "open"),
                                          due_before=due_before)[:100])
    lines = [f"- {r.task} ({r.status}{', due ' + r.due_at.isoformat() if r.due_at else ''}) [id {r.pk}]"
             for r in found]
    return ToolResult("\n".join(lines) or "No reminders.", {"reminders": [_reminder_data(r) for r in found]})


@tool(TOOLS, "update_reminder", title="Mark a reminder done or cancelled", idempotent=True, required=(
        "reminder_id", "status"), properties={
    "reminder_id": {"type": "integer", "minimum": 1, "description": "The id list_reminders gave."},
    "status": {"type": "string", "enum": Reminder.Status.values, "description": "done, cancelled, or open again."},
}, description="Mark one of the user's reminders done or cancelled (or open it again).")
def update_reminder(user, args):
    reminder = Reminder.objects.filter(owner=user, pk=args["reminder_id"]).first()
    if reminder is None:
        raise ValidationError({"reminder_id": ["No such reminder."]})
    reminder = reminder_services.reminder_set_status(reminder=reminder, status=args["status"], actor=user,
                                                     reason="by the agent, for the user")
    return ToolResult(f"Reminder {reminder.pk} is {reminder.status}.", _reminder_data(reminder))
