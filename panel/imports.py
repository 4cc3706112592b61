"""The panel's import page: upload an export (ChatGPT, Claude, Mem0, LangGraph store, JSON Lines) and watch it
being written with a progress bar (polling the same view of an import the API gives)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from imports import formats, services
from imports.models import Import
from imports.serializers import ImportSerializer
from panel.forms import REFUSED, submit_upload

FORMAT_CHOICES = [("auto", "Tell from the file"), ("chatgpt", "ChatGPT export"), ("claude", "Claude export"),
                  ("mem0", "Mem0 memories"), ("langgraph", "LangGraph store (JSON)"),
                  ("jsonl", "JSON Lines of messages")]
assert [name for name, _ in FORMAT_CHOICES] == list(formats.FORMATS)


class HistoryImportForm(forms.Form):
    note = ("A ChatGPT or Claude data export (the zip, or its conversations.json), Mem0 memories (get_all or export "
            "JSON), a LangGraph store dump (search items), or JSON Lines of messages. Conversations keep their titles, "
            "roles and times, and their facts become memories; importing the same file again adds nothing.")
    file = forms.FileField(allow_empty_file=True,
                           help_text="conversations.json or the export zip, Mem0 or LangGraph JSON, JSON Lines")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="auto")
    skip_bad = forms.BooleanField(required=False, label="Skip bad items",
                                  help_text="Otherwise one bad item refuses the whole file")


@login_required
def import_list(request):
    posted = request.method == "POST"
    form = HistoryImportForm(request.POST if posted else None, request.FILES if posted else None)
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]

        def write():
            if upload.size > settings.IMPORT_MAX_BYTES:
                raise services.FileTooLarge(
                    f"The file is {upload.size:,} bytes; the limit is {settings.IMPORT_MAX_BYTES:,}.")
            return services.import_upload(owner=request.user, raw=upload.read(), filename=upload.name or "",
                                          format=form.cleaned_data["format"], skip_bad=form.cleaned_data["skip_bad"])

        job = submit_upload(form, write, file_errors=(services.FileTooLarge,))
        if job is not REFUSED:
            messages.success(request, f"Importing {job.filename}: {job.items_total} items to write.")
            return redirect("panel:import_detail", pk=job.pk)
    imports = Import.objects.filter(owner=request.user).order_by("-created_at")
    return render(request, "panel/import_list.html", {
        "form": form, "page": Paginator(imports, 20).get_page(request.GET.get("page")),
    })


def _import(request, pk) -> Import:
    return get_object_or_404(Import.objects.filter(owner=request.user), pk=pk)


@login_required
def import_detail(request, pk):
    job = _import(request, pk)
    status = ImportSerializer(job).data
    problems = [str(formats.Problem.from_dict(problem)) for problem in job.problems]
    return render(request, "panel/import_detail.html", {"job": job, "status": status, "problems": problems})


@login_required
@require_GET
def import_status(request, pk):
    """What the detail page's progress bar polls: the API's view of the import."""
    return JsonResponse(ImportSerializer(_import(request, pk)).data)
