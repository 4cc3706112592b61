"""The memory form of the admin."""

import uuid

from django import forms
from django.core.exceptions import ValidationError

from memories import services
from memories.models import Memory


class MemoryAdminForm(forms.ModelForm):
    """Checks the services would make, done here so that a mistake shows on the form instead of as an error page."""

    class Meta:
        model = Memory
        fields = ("owner", *services.WRITABLE_FIELDS, "is_active")  # never the vectors

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "key" in self.fields:
            self.fields["key"].required = False
            self.fields["key"].help_text = "Unique per owner and namespace among live memories; empty: a new UUID."

    def clean(self):
        cleaned = super().clean()
        owner = cleaned.get("owner") or (self.instance.owner if self.instance.owner_id else None)
        for name in ("project", "conversation", "message"):
            related = cleaned.get(name)
            if related is not None and owner is not None and related.owner_id != owner.pk:
                self.add_error(name, f"This {name} belongs to another user.")
        for name, validate in (("content", services.validate_content), ("namespace", services.validate_namespace)):
            if name in self.fields and cleaned.get(name) is not None:
                try:
                    validate(cleaned[name])
                except ValidationError as exc:
                    self.add_error(name, exc.message_dict[name])
        if "key" in self.fields and not cleaned.get("key"):
            cleaned["key"] = str(uuid.uuid4())
        is_active = cleaned.get("is_active", self.instance.is_active)
        namespace = cleaned.get("namespace", self.instance.namespace)
        key = cleaned.get("key", self.instance.key)
        if owner is not None and is_active and namespace and key and (
            Memory.objects.filter(owner=owner, namespace=namespace, key=key, is_active=True)
            .exclude(pk=self.instance.pk).exists()
        ):
            self.add_error("key" if "key" in self.fields else None,
                           f"A live memory of this owner already uses key {key!r} in this namespace.")
        return cleaned
