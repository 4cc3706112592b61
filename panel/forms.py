"""Panel forms. They check shape and turn text inputs into the values the services take; the rules stay in the
services, whose ValidationErrors `add_service_errors` puts next to the fields they name."""

import json
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError

from core.parsers import FiniteJSONDecoder
from core.times import check_moment
from memories.models import Memory, Project

DATETIME_WIDGET = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")
STEP_WIDGET = forms.NumberInput(attrs={"step": 0.05})


def add_service_errors(form: forms.Form, exc: ValidationError) -> None:
    """A service's ValidationError onto the form: errors for fields the form shows go next to them, the rest
    (fields the form does not have, such as `items` or `supersedes`) at the top."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc)
        return
    for name, reasons in exc.message_dict.items():
        form.add_error(name if name in form.fields else None, reasons)


REFUSED = object()  # what `submit_upload` returns when the service refused the upload


def submit_upload(form: forms.Form, write: Callable[[], Any], *, file_errors: tuple = ()) -> Any:
    """An upload form's one service call: what `write()` returns, or REFUSED with the reasons on the form (the
    file's own refusals, `file_errors` such as too large or of no known type, on its field; a ValidationError next
    to the fields it names)."""
    try:
        return write()
    except file_errors as exc:
        form.add_error("file", str(exc))
    except ValidationError as exc:
        add_service_errors(form, exc)
    return REFUSED


def refusal_text(exc: ValidationError) -> str:
    """A service's ValidationError as one message line: "field: reason; field: reason" (its reasons alone when it
    names no field)."""
    if not hasattr(exc, "error_dict"):
        return " ".join(exc.messages)
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items())


def write_and_tell(request, write: Callable[[], Any], *, done: str | Callable[[Any], str],
                   value_error: Callable[[ValueError], str] | None = None) -> None:
    """A POST's one service call, told as a message: `done` (or `done(result)`) on success, the service's refusal
    (a ValidationError) as an error. Where `value_error` words it, a ValueError (a bad number sent) is a refusal
    too; otherwise it is a bug and raised."""
    refused = (ValidationError, ValueError) if value_error else ValidationError
    try:
        result = write()
    except refused as exc:
        messages.error(request, refusal_text(exc) if isinstance(exc, ValidationError) else value_error(exc))
    else:
        messages.success(request, done(result) if callable(done) else done)


def split_list(text: str, separator: str) -> list[str]:
    return [part.strip() for part in (text or "").split(separator) if part.strip()]


class OwnedProjectField(forms.ModelChoiceField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("queryset", Project.objects.none())
        kwargs.setdefault("required", False)
        kwargs.setdefault("empty_label", "No project (applies everywhere)")
        super().__init__(*args, **kwargs)


class MemoryForm(forms.Form):
    """Create or edit a memory. `owner` limits the project choices to the owner's projects. Only `content` is
    needed: the rest (under "More" on the page) falls back to the services' defaults when left empty."""

    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 4, "autofocus": True,
                                                           "placeholder": "e.g. I prefer window seats"}),
                              strip=True, label="What should be remembered?")
    category = forms.CharField(required=False, max_length=100, help_text="e.g. preference, fact, event")
    subject = forms.CharField(required=False, max_length=200, help_text="Who or what it is about")
    tags = forms.CharField(required=False, help_text="Comma-separated")
    project = OwnedProjectField()
    importance = forms.FloatField(min_value=0, max_value=1, initial=0.5, required=False, widget=STEP_WIDGET,
                                  help_text="0 to 1: how much it matters when recalled")
    confidence = forms.FloatField(min_value=0, max_value=1, initial=1.0, required=False, widget=STEP_WIDGET,
                                  help_text="0 to 1: how sure it is")
    namespace = forms.CharField(initial="memories", required=False,
                                help_text="Slash-separated path, e.g. memories/profile")
    key = forms.CharField(required=False, max_length=255, help_text="Optional; the same key updates that memory")
    happened_at = forms.DateTimeField(required=False, widget=DATETIME_WIDGET, label="Happened at",
                                      validators=[check_moment])
    expires_at = forms.DateTimeField(required=False, widget=DATETIME_WIDGET, label="Expires at",
                                     validators=[check_moment])
    metadata = forms.JSONField(required=False, initial=dict, widget=forms.Textarea(attrs={"rows": 2}),
                               decoder=FiniteJSONDecoder,
                               help_text='Optional, a JSON object, e.g. {"source": "phone call"}')

    FIELDS = ("content", "category", "subject", "tags", "project", "importance", "confidence", "namespace", "key",
              "happened_at", "expires_at", "metadata")
    MORE = FIELDS[1:]  # the page shows them under "More"

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = Project.objects.filter(owner=owner)

    @classmethod
    def initial_for(cls, memory: Memory) -> dict:
        return {
            **{name: getattr(memory, name) for name in cls.FIELDS if name not in ("tags", "namespace")},
            "tags": ", ".join(memory.tags),
            "namespace": "/".join(memory.namespace),
        }

    def clean_tags(self) -> list[str]:
        tags = split_list(self.cleaned_data["tags"], ",")
        if any(len(tag) > 100 for tag in tags):
            raise ValidationError("A tag is at most 100 characters long.")
        return tags

    def _or_initial(self, name: str):
        value = self.cleaned_data[name]
        return self.fields[name].initial if value is None else value

    def clean_importance(self) -> float:
        return self._or_initial("importance")

    def clean_confidence(self) -> float:
        return self._or_initial("confidence")

    def clean_namespace(self) -> list[str]:
        text = self.cleaned_data["namespace"].strip() or self.fields["namespace"].initial
        return split_list(text, "/")

    def more_open(self) -> bool:
        """Whether "More" starts open: when a field in it has an error (it would be hidden otherwise)."""
        return any(name in self.errors for name in (*self.MORE, "allow_duplicate"))

    def clean_metadata(self):
        value = self.cleaned_data["metadata"]
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise ValidationError("Metadata must be a JSON object, e.g. {\"source\": \"phone call\"}.")
        return value

    def values(self, *, changed_only: bool = False) -> dict:
        """Cleaned values as the services take them; an empty key lets the service generate one."""
        names = [n for n in self.FIELDS if n in self.changed_data] if changed_only else list(self.FIELDS)
        data = {name: self.cleaned_data[name] for name in names}
        if not changed_only and not data["key"]:
            data.pop("key")
        return data


class MemoryCreateForm(MemoryForm):
    allow_duplicate = forms.BooleanField(
        required=False, label="Store even if a near-identical memory exists",
    )


STATUS_CHOICES = [
    ("active", "Active"),
    ("superseded", "Superseded"),
    ("expired", "Expired"),
    ("deleted", "Deleted"),
    ("all", "All"),
]


class MemoryFilterForm(forms.Form):
    """The memory list's search box and filters (a GET form: every field optional). `namespaces` are the owner's
    (labels, count) pairs the namespace choice offers; a namespace picked keeps it and those below it."""

    q = forms.CharField(required=False, max_length=4000, label="Search")
    mode = forms.ChoiceField(choices=[(m, m.title()) for m in ("hybrid", "semantic", "keyword")], required=False)
    project = forms.ChoiceField(required=False)
    # any namespace may be asked for (a row's link names its own), the choice offers the owner's live ones
    namespace = forms.CharField(required=False, widget=forms.Select, max_length=10_000,
                                help_text="Store items live in namespaces of their own")
    tags = forms.CharField(required=False, help_text="Comma-separated; any of them")
    category = forms.CharField(required=False, max_length=100)
    source = forms.ChoiceField(choices=[("", "Any source"), *Memory.Source.choices], required=False)
    status = forms.ChoiceField(choices=STATUS_CHOICES, required=False)
    as_of = forms.DateField(required=False, label="As of", widget=forms.DateInput(attrs={"type": "date"}),
                            help_text="What was true on that day (superseded memories included)")

    # what each filter is when it leaves the list alone (a search submits them all, blank or at these values)
    UNFILTERED = {"project": "", "namespace": [], "tags": [], "category": "", "source": "", "status": "active",
                  "as_of": None}

    def __init__(self, *args, owner, namespaces=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.projects = {str(p.pk): p for p in Project.objects.filter(owner=owner)}
        self.fields["project"].choices = [
            ("", "All projects"), ("none", "No project"), *((pk, p.name) for pk, p in self.projects.items())
        ]
        choices = {namespace_value(labels): f"{'/'.join(labels)} ({count})" for labels, count in namespaces}
        asked = self.data.get("namespace") or ""
        if asked and asked not in choices:
            choices[asked] = f"{asked} (0)"
        self.fields["namespace"].widget.choices = [("", "All namespaces"), *choices.items()]

    def clean_mode(self) -> str:
        return self.cleaned_data["mode"] or "hybrid"

    def clean_namespace(self) -> list[str]:
        value = self.cleaned_data["namespace"]
        if not value:
            return []
        try:
            labels = json.loads(value)
        except ValueError:
            labels = None
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            raise ValidationError('A namespace is a JSON list of labels, e.g. ["memories", "profile"].')
        return labels

    def clean_tags(self) -> list[str]:
        return split_list(self.cleaned_data["tags"], ",")

    def clean_status(self) -> str:
        return self.cleaned_data["status"] or "active"

    def filters_open(self) -> bool:
        """Whether the filter panel starts open: when a filter narrows the list or has an error, not merely
        because a search sent the blank ones along."""
        return any(name in self.errors or self.cleaned_data.get(name, unset) != unset
                   for name, unset in self.UNFILTERED.items())


def namespace_value(labels) -> str:
    """A namespace as the list filter's value: its labels as JSON (a label may itself contain "/")."""
    return json.dumps(list(labels), ensure_ascii=False, separators=(",", ":"))


class DocumentUploadForm(forms.Form):
    file = forms.FileField(allow_empty_file=True, help_text="PDF, DOCX, HTML, Markdown or plain text")
    title = forms.CharField(required=False, max_length=300)
    project = OwnedProjectField(empty_label="No project")

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = Project.objects.filter(owner=owner)


class ImportForm(forms.Form):
    file = forms.FileField(allow_empty_file=True, help_text="JSON Lines, as the export writes it")


class TokenForm(forms.Form):
    """A new API token: its name and scope. `owner` limits the project choices to the owner's projects."""

    name = forms.CharField(max_length=100, help_text="The agent or script that will use it, e.g. “Cursor at work”")
    access = forms.ChoiceField(choices=[("read_write", "Read and write"), ("read", "Read only")],
                               initial="read_write")
    project = OwnedProjectField(empty_label="Every project and your user-scoped memories",
                                help_text="Bound to one project: it sees and writes that project's memories only")
    agent_id = forms.CharField(required=False, max_length=200, label="Agent id",
                               help_text="Bound to one agent_id: it sees and writes that agent's memories only")
    expires_in_days = forms.IntegerField(required=False, min_value=1, max_value=3650, label="Expires in (days)",
                                         help_text="Empty: the server's default")
    never_expires = forms.BooleanField(required=False, label="Never expires")
    for_end_users = forms.BooleanField(required=False, label="Service token for end users",
                                       help_text="Acts for your app's end users, each named by the "
                                                 "X-Memento-End-User header, never for you")

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = Project.objects.filter(owner=owner)
