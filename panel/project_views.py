"""The panel's projects page: the user's projects with how many memories each holds; create, rename, describe and
delete (which erases the project's own memories, as the API does). Writes go through memories.services."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from memories import services as memory_services
from memories.models import Project
from panel.forms import write_and_tell


@login_required
def project_list(request):
    projects = Project.objects.filter(owner=request.user).annotate(
        live=Count("memories", filter=Q(memories__is_active=True, memories__superseded_by__isnull=True)))
    return render(request, "panel/projects.html", {"projects": projects})


@login_required
@require_POST
def project_create(request):
    write_and_tell(request, lambda: memory_services.project_create(
        owner=request.user, name=request.POST.get("name", "").strip(),
        description=request.POST.get("description", "").strip()), done="Project created.")
    return redirect("panel:projects")


@login_required
@require_POST
def project_edit(request, pk):
    project = get_object_or_404(Project.objects.filter(owner=request.user), pk=pk)
    if request.POST.get("action") == "delete":
        memory_services.project_delete(project=project)
        messages.success(request, f"Project “{project.name}” and its own memories deleted.")
        return redirect("panel:projects")
    write_and_tell(request, lambda: memory_services.project_update(project=project, data={
        "name": request.POST.get("name", "").strip(), "description": request.POST.get("description", "").strip()}),
        done="Project saved.")
    return redirect("panel:projects")
