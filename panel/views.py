"""The personal memory panel: server-rendered pages over the logged-in user's own memories, documents and
conversations. Each view scopes its queries to `request.user` (another user's id is a 404, like a missing one),
writes through the apps' services, and leaves row-level security to `core.rls.RowLevelSecurityMiddleware`."""

import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch
from django.http import JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.templatetags.static import static
from django.views.decorators.http import require_GET, require_POST
from rest_framework.exceptions import ParseError

from conversations.models import Conversation
from core.parsers import JSONLinesParser
from documents import selectors as document_selectors
from documents import services as document_services
from documents.models import Document
from documents.serializers import DocumentSerializer
from memories import portability
from memories import selectors as memory_selectors
from memories import services as memory_services
from memories.bookkeeping import touch_after_response
from memories.models import HistoryAction, Memory, MemoryEvent
from memories.search.ranking import RANKINGS
from panel import reasons, selectors
from panel.forms import (
    REFUSED,
    DocumentUploadForm,
    ImportForm,
    MemoryCreateForm,
    MemoryFilterForm,
    MemoryForm,
    add_service_errors,
    submit_upload,
)

PAGE_SIZE = 25


def _page(request, rows, size: int = PAGE_SIZE):
    return Paginator(rows, size).get_page(request.GET.get("page"))


def _memory(request, pk) -> Memory:
    return get_object_or_404(Memory.objects.owned_by(request.user).select_related("project"), pk=pk)


@require_GET
def favicon(request):
    """`/favicon.ico`, which browsers ask for on pages that name no icon (the API's, the schema's): the panel's."""
    return redirect(static("panel/favicon.svg"), permanent=True)


# --- overview -------------------------------------------------------------------------------------------------


@login_required
def overview(request):
    counts = selectors.overview_counts(owner=request.user)
    return render(request, "panel/overview.html", {
        "counts": counts,
        "chart": selectors.bar_chart(counts["per_day"]),
        "documents": Document.objects.filter(owner=request.user).count(),
        "conversations": Conversation.objects.filter(owner=request.user).count(),
        "recent": Memory.objects.owned_by(request.user).active().order_by("-created_at")[:5],
    })


# --- memories -------------------------------------------------------------------------------------------------


@login_required
def memory_list(request):
    form = MemoryFilterForm(request.GET, owner=request.user,
                            namespaces=selectors.namespace_counts(owner=request.user))
    form.is_valid()  # every field is optional; invalid ones are shown and left out
    data = form.cleaned_data
    rows, search = selectors.memory_page_rows(owner=request.user, form_data=data, projects=form.projects)
    page = _page(request, rows)
    if search is not None:
        touch_after_response(memory_ids=[r.memory.pk for r in page], owner_id=request.user.pk,
                             action=MemoryEvent.Action.SEARCH, query=data["q"])
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "panel/memory_list.html", {
        "form": form, "page": page, "search": search, "query": query.urlencode(),
        "ranking_help": RANKINGS.get(search.ranking) if search is not None else None,
    })


@login_required
def memory_create(request):
    form = MemoryCreateForm(request.POST if request.method == "POST" else None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            write = memory_services.memory_create(
                owner=request.user, actor=request.user, reason="created in the panel",
                allow_duplicate=form.cleaned_data["allow_duplicate"], **form.values(),
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if write.outcome == "duplicate":
                form.add_error("content", "A near-identical memory already exists; tick “Store even if a "
                                          "near-identical memory exists” to keep both.")
                return render(request, "panel/memory_form.html", {"form": form, "duplicate": write.memory})
            verb = "Updated the memory with that key" if write.outcome == "updated" else "Memory saved"
            messages.success(request, f"{verb}.")
            return redirect("panel:memory_detail", pk=write.memory.pk)
    return render(request, "panel/memory_form.html", {"form": form})


@login_required
def memory_edit(request, pk):
    memory = _memory(request, pk)
    form = MemoryForm(request.POST if request.method == "POST" else None, owner=request.user,
                      initial=MemoryForm.initial_for(memory))
    if request.method == "POST" and form.is_valid():
        changes = form.values(changed_only=True)
        if not changes:
            messages.info(request, "Nothing changed.")
            return redirect("panel:memory_detail", pk=memory.pk)
        try:
            memory_services.memory_update(memory=memory, data=changes, actor=request.user,
                                         reason="edited in the panel")
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, "Memory updated.")
            return redirect("panel:memory_detail", pk=memory.pk)
    return render(request, "panel/memory_form.html", {"form": form, "memory": memory})


@login_required
def memory_detail(request, pk):
    memory = _memory(request, pk)
    touch_after_response(memory_ids=[memory.pk], owner_id=request.user.pk, action=MemoryEvent.Action.READ)
    document = None
    document_id = memory.source_ref.get("document_id")
    if document_id:
        document = Document.objects.filter(owner=request.user, pk=document_id).first()
    versions = selectors.memory_timeline(memory=memory)
    supersession = selectors.supersession(memory=memory)
    # each reason as a sentence with its evidence linked (the stored text under "details"), one lookup for all
    said = [v.record.history_change_reason or "" for v in versions] + [supersession.reason if supersession else ""]
    readings = reasons.readings(request.user, said, texts=[memory.content], replaced=[
        v.record.history_action == HistoryAction.Action.SUPERSEDE for v in versions] + [True])
    return render(request, "panel/memory_detail.html", {
        "memory": memory,
        "versions": [(v, reading) for v, reading in zip(versions, readings, strict=False)],
        "chain": memory_selectors.memory_chain(memory=memory),
        "supersession": supersession,
        "supersession_reading": readings[-1],
        "frames": reasons.frames_of(memory, texts=[memory.content]),
        "message": memory.message if memory.message_id and memory.message.owner_id == request.user.pk else None,
        "document": document,
    })


def _write_action(request, pk, action, done: str):
    memory = _memory(request, pk)
    try:
        action(memory)
    except ValidationError as exc:
        for text in exc.messages:
            messages.error(request, text)
    else:
        messages.success(request, done)
    return redirect("panel:memory_detail", pk=memory.pk)


@login_required
@require_POST
def memory_delete(request, pk):
    return _write_action(request, pk, lambda m: memory_services.memory_soft_delete(
        memory=m, actor=request.user, reason="deleted in the panel"), "Memory deleted; you can restore it.")


@login_required
@require_POST
def memory_restore(request, pk):
    return _write_action(request, pk, lambda m: memory_services.memory_restore(
        memory=m, actor=request.user, reason="restored in the panel"), "Memory restored.")


@login_required
@require_POST
def memory_revert(request, pk):
    try:
        history_id = int(request.POST.get("history_id", ""))
    except ValueError:
        history_id = 0  # no such version: the service says so
    undo = request.POST.get("undo") == "supersession"
    done = ("Supersession undone: this memory is current again." if undo
            else "Memory reverted: the old version is now current.")
    return _write_action(request, pk, lambda m: memory_services.memory_revert(
        memory=m, history_id=history_id, actor=request.user,
        reason="supersession undone in the panel" if undo else ""), done)


@login_required
@require_POST
def memory_forget(request, pk):
    memory = _memory(request, pk)
    memory_services.memory_forget(memory=memory, actor=request.user)
    messages.success(request, "Memory and its history erased for good.")
    return redirect("panel:memory_list")


# --- documents ------------------------------------------------------------------------------------------------


@login_required
def document_list(request):
    posted = request.method == "POST"
    form = DocumentUploadForm(request.POST if posted else None, request.FILES if posted else None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        document = submit_upload(form, lambda: document_services.document_upload(
            owner=request.user, file=form.cleaned_data["file"], project=form.cleaned_data["project"],
            title=form.cleaned_data["title"],
        ), file_errors=(document_services.FileTooLarge, document_services.UnsupportedFileType))
        if document is not REFUSED:
            messages.success(request, f"Uploaded {document.filename}; processing has started.")
            return redirect("panel:document_detail", pk=document.pk)
    documents = Document.objects.filter(owner=request.user).select_related("project").order_by("-created_at")
    return render(request, "panel/document_list.html", {"form": form, "page": _page(request, documents)})


def _document(request, pk) -> Document:
    return get_object_or_404(Document.objects.filter(owner=request.user).select_related("project"), pk=pk)


@login_required
def document_detail(request, pk):
    document = _document(request, pk)
    return render(request, "panel/document_detail.html", {
        "document": document,
        "status": DocumentSerializer(document).data,
        "chunks": document_selectors.document_chunks(document=document)[:20],
        "memories": document_selectors.document_memories(document=document)[:100],
    })


@login_required
@require_GET
def document_status(request, pk):
    """What the detail page's progress bar polls: the API's view of the document (status, progress, error)."""
    return JsonResponse(DocumentSerializer(_document(request, pk)).data)


@login_required
@require_POST
def document_delete(request, pk):
    document = _document(request, pk)
    document_services.document_delete(document=document, actor=request.user)
    messages.success(request, f"Deleted {document.filename} and the memories derived only from it.")
    return redirect("panel:document_list")


# --- conversations --------------------------------------------------------------------------------------------


@login_required
def conversation_list(request):
    conversations = (Conversation.objects.filter(owner=request.user).select_related("project")
                     .annotate(message_count=Count("messages", distinct=True),
                               memory_count=Count("memories", distinct=True))
                     .order_by("-created_at"))
    return render(request, "panel/conversation_list.html", {"page": _page(request, conversations)})


@login_required
def conversation_detail(request, pk):
    conversation = get_object_or_404(Conversation.objects.filter(owner=request.user).select_related("project"), pk=pk)
    produced = Memory.objects.owned_by(request.user).order_by("created_at")
    messages_ = (conversation.messages.filter(owner=request.user).order_by("sequence")
                 .prefetch_related(Prefetch("memories", queryset=produced)))
    return render(request, "panel/conversation_detail.html", {
        "conversation": conversation, "page": _page(request, messages_, 100),
    })


# --- settings: export, import (tokens: panel/access.py) -------------------------------------------------------


@login_required
def settings_page(request, *, import_form=None, status: int = 200):
    return render(request, "panel/settings.html", {
        "import_form": import_form or ImportForm(), "memory_count": Memory.objects.owned_by(request.user).count(),
    }, status=status)


@login_required
@require_GET
def export(request):
    """All the user's memories with their versions, as the API's export writes them (JSON Lines)."""
    lines = portability.memory_export_lines(owner=request.user)  # the RLS middleware binds the stream
    response = StreamingHttpResponse(lines, content_type="application/jsonl")
    response["Content-Disposition"] = 'attachment; filename="memories.jsonl"'
    return response


@login_required
@require_POST
def import_memories(request):
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            records = JSONLinesParser().parse(io.BytesIO(form.cleaned_data["file"].read()))
            result = portability.memory_import(owner=request.user, records=records, actor=request.user)
        except ParseError as exc:
            form.add_error("file", str(exc.detail))
        except ValidationError as exc:
            form.add_error("file", [m for msgs in exc.message_dict.values() for m in msgs]
                           if hasattr(exc, "error_dict") else exc.messages)
        else:
            imported, versions, skipped = result["imported"], result["versions"], result["skipped"]
            messages.success(request, f"Imported {imported} memor{pluralize(imported, 'y,ies')} ({versions} "
                                      f"version{pluralize(versions)}); {skipped} {pluralize(skipped, 'was,were')} "
                                      f"already here.")
            return redirect("panel:settings")
    return settings_page(request, import_form=form, status=400)
