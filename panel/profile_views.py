"""Panel pages for what an agent always knows: the profile (entries with their evidence; edit, pin, hide), the
reminders, the consolidation history (each change revertible), and "what would my agent see?" (the context for a
question, item by item, with scores and token use). Each view scopes to `request.user` and writes through the
profiles services."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from conversations.context import context_for
from memories.models import Memory
from panel.forms import write_and_tell
from profiles import consolidation, reminder_services, selectors, services
from profiles.context import profile_block
from profiles.models import ConsolidationRun, ProfileEntry, Reminder, Section


@login_required
def profile_page(request):
    view = selectors.profile_view(owner=request.user, include_hidden=True)
    ids = {pk for _, entries in view.sections for e in entries for pk in e.memory_ids}
    memories = {m.pk: m for m in Memory.objects.owned_by(request.user).filter(pk__in=ids).only("pk", "content")}
    sections = [(section, [(e, [memories[pk] for pk in e.memory_ids if pk in memories]) for e in entries])
                for section, entries in view.sections]
    return render(request, "panel/profile.html", {
        "view": view, "sections": sections, "section_choices": Section.choices,
        "settings": services.settings_for(request.user),
    })


@login_required
@require_POST
def profile_entry_action(request, pk):
    entry = get_object_or_404(ProfileEntry.objects.filter(owner=request.user), pk=pk)
    action = request.POST.get("action", "")
    data = {"edit": lambda: {"text": request.POST.get("text", "")}, "pin": lambda: {"pinned": not entry.pinned},
            "hide": lambda: {"hidden": True}, "show": lambda: {"hidden": False},
            "reset": lambda: {"user_edited": False}}.get(action)
    if data is None:
        messages.error(request, "Unknown action.")
        return redirect("panel:profile")
    write_and_tell(request, lambda: services.entry_update(entry=entry, data=data(), actor=request.user),
                   done="Profile entry updated.")
    return redirect("panel:profile")


@login_required
@require_POST
def profile_entry_add(request):
    write_and_tell(request, lambda: services.entry_create(owner=request.user, section=request.POST.get("section", ""),
                                                         text=request.POST.get("text", ""), actor=request.user),
                   done="Entry added to your profile.")
    return redirect("panel:profile")


@login_required
@require_POST
def profile_settings(request):
    data = {name: request.POST[name] for name in ("time_zone", "profile_budget") if request.POST.get(name)}
    write_and_tell(request, lambda: services.settings_update(owner=request.user, data=data), done="Settings saved.",
                   value_error=str)
    return redirect("panel:reminders" if request.POST.get("next") == "reminders" else "panel:profile")


@login_required
def reminders_page(request):
    everything = list(selectors.reminders_list(owner=request.user, status="all"))
    now = timezone.now()
    open_ = [r for r in everything if r.status == Reminder.Status.OPEN]
    return render(request, "panel/reminders.html", {
        "overdue": [r for r in open_ if r.due_at and r.due_at < now],
        "upcoming": [r for r in open_ if not r.due_at or r.due_at >= now],
        "closed": [r for r in everything if r.status != Reminder.Status.OPEN][:50],
        "settings": services.settings_for(request.user),
    })


@login_required
@require_POST
def reminder_add(request):
    write_and_tell(request, lambda: reminder_services.reminder_create(
        owner=request.user, text=request.POST.get("text", ""), actor=request.user), done="Reminder added.")
    return redirect("panel:reminders")


@login_required
@require_POST
def reminder_status(request, pk):
    reminder = get_object_or_404(Reminder.objects.filter(owner=request.user), pk=pk)
    write_and_tell(request, lambda: reminder_services.reminder_set_status(
        reminder=reminder, status=request.POST.get("status", ""), reason="in the panel", actor=request.user),
        done=f"Reminder {request.POST.get('status')}.")
    return redirect("panel:reminders")


@login_required
def consolidation_page(request):
    runs = list(ConsolidationRun.objects.filter(owner=request.user)[:30])
    return render(request, "panel/consolidation.html", {"runs": runs})


@login_required
@require_POST
def consolidation_start(request):
    consolidation.consolidation_start(owner=request.user, trigger="request")
    messages.success(request, "Consolidation started; refresh to see what it did.")
    return redirect("panel:consolidation")


@login_required
@require_POST
def consolidation_revert(request, pk):
    run = get_object_or_404(ConsolidationRun.objects.filter(owner=request.user), pk=pk)
    change = request.POST.get("change")
    write_and_tell(request, lambda: consolidation.consolidation_revert(
        run=run, change=int(change) if change else None, actor=request.user),
        done=lambda done: f"{done.count} change(s) reverted.", value_error=lambda exc: "Unknown change.")
    return redirect("panel:consolidation")


@login_required
def agent_view(request):
    """What get_context would give an agent for a question: the profile head, each item with its score, tokens
    and source, and the whole text with its token count."""
    query = request.GET.get("q", "").replace("\x00", "").strip()[:4000]  # text PostgreSQL can compare
    try:
        budget = min(max(int(request.GET.get("budget") or 1000), 16), 32000)
    except ValueError:
        budget = 1000
    context = head = None
    if query:
        head = profile_block(owner=request.user, budget=budget)
        context = context_for(owner=request.user, query=query, budget=budget)
    return render(request, "panel/agent_view.html", {"query": query, "budget": budget, "context": context,
                                                     "head": head})
