"""Panel forms. They check shape and turn text inputs into the values the services take; the rules stay in the
services, whose ValidationErrors `add_service_errors` puts next to the fields they name."""

from django import forms
from django.core.exceptions import ValidationError

from core.parsers import FiniteJSONDecoder
from core.times import check_moment
from memories.models import Memory, Project

DATETIME_WIDGET = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


def add_service_errors(form: forms.Form, exc: ValidationError) -> None:
    """A service's ValidationError onto the form: errors for fields the form shows go next to them, the rest
    (fields the form does not have, such as `items` or `supersedes`) at the top."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc)
        return
    for name, messages in exc.message_dict.items():
        form.add_error(name if name in form.fields else None, messages)


def split_list(text: str, separator: str) -> list[str]:
    return [part.strip() for part in (text or "").split(separator) if part.strip()]


class OwnedProjectField(forms.ModelChoiceField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("queryset", Project.objects.none())
        kwargs.setdefault("required", False)
        kwargs.setdefault("empty_label", "No project (applies everywhere)")
        super().__init__(*args, **kwargs)


class MemoryForm(forms.Form):
    """Create or edit a memory. `owner` limits the project choices to the owner's projects."""

    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), strip=True)
    category = forms.CharField(required=False, max_length=100, help_text="e.g. preference, fact, event")
    subject = forms.CharField(required=False, max_length=200, help_text="Who or what it is about")
    tags = forms.CharField(required=False, help_text="Comma-separated")
    project = OwnedProjectField()
    importance = forms.FloatField(min_value=0, max_value=1, initial=0.5, widget=forms.NumberInput(attrs={"step": 0.05}))
    confidence = forms.FloatField(min_value=0, max_value=1, initial=1.0, widget=forms.NumberInput(attrs={"step": 0.05}))
    namespace = forms.CharField(initial="memories", help_text="Slash-separated path, e.g. memories/profile")
    key = forms.CharField(required=False, max_length=255, help_text="Optional; the same key updates that memory")
    happened_at = forms.DateTimeField(required=False, widget=DATETIME_WIDGET, label="Happened at",
                                      validators=[check_moment])
    expires_at = forms.DateTimeField(required=False, widget=DATETIME_WIDGET, label="Expires at",
                                     validators=[check_moment])
    metadata = forms.JSONField(required=False, initial=dict, widget=forms.Textarea(attrs={"rows": 2}),
                               decoder=FiniteJSONDecoder)

    FIELDS = ("content", "category", "subject", "tags", "project", "importance", "confidence", "namespace", "key",
              "happened_at", "expires_at", "metadata")

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

    def clean_namespace(self) -> list[str]:
        return split_list(self.cleaned_data["namespace"], "/")

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
    """The memory list's search box and filters (a GET form: every field optional)."""

    q = forms.CharField(required=False, max_length=4000, label="Search")
    mode = forms.ChoiceField(choices=[(m, m.title()) for m in ("hybrid", "semantic", "keyword")], required=False)
    project = forms.ChoiceField(required=False)
    tags = forms.CharField(required=False, help_text="Comma-separated; any of them")
    category = forms.CharField(required=False, max_length=100)
    source = forms.ChoiceField(choices=[("", "Any source"), *Memory.Source.choices], required=False)
    status = forms.ChoiceField(choices=STATUS_CHOICES, required=False)
    as_of = forms.DateField(required=False, label="As of", widget=forms.DateInput(attrs={"type": "date"}),
                            help_text="What was true on that day (superseded memories included)")

    def __init__(self, *args, owner, **kwargs):
        super().__init__(*args, **kwargs)
        self.projects = {str(p.pk): p for p in Project.objects.filter(owner=owner)}
        self.fields["project"].choices = [
            ("", "All projects"), ("none", "No project"), *((pk, p.name) for pk, p in self.projects.items())
        ]

    def clean_mode(self) -> str:
        return self.cleaned_data["mode"] or "hybrid"

    def clean_tags(self) -> list[str]:
        return split_list(self.cleaned_data["tags"], ",")

    def clean_status(self) -> str:
        return self.cleaned_data["status"] or "active"


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
