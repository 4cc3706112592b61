"""Shapes of the credentials API (tokens, end users). Shape only: the rules are in the services."""

from rest_framework import serializers

from accounts.models import ApiToken, EndUser
from core.serializers import CharField, ChoiceField, OwnedPrimaryKeyField, StrictSerializer, read_only_meta
from memories.models import Project


class TokenSerializer(serializers.ModelSerializer):
    """A token as listed: never its key (only its prefix)."""

    scope = serializers.CharField(source="scope_text", read_only=True, help_text="The scope in words.")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "access", "project", "agent_id", "for_end_users", "scope", "created_at",
                  "expires_at", "last_used_at", "last_used_from", "revoked_at"]
        read_only_fields = fields


class IssuedTokenSerializer(TokenSerializer):
    """A token just made, with its key: the one response that carries it."""

    key = serializers.CharField(read_only=True, help_text="The key: shown this once, stored only as a digest.")

    Meta = read_only_meta(TokenSerializer, "key")


class JSONBooleanField(serializers.BooleanField):
    """true or false, nothing else ("yes", 0 and 1 are what the schema calls the wrong type: a 400)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class TokenCreateSerializer(StrictSerializer):
    name = CharField(max_length=100, help_text="What it is for (the agent or script using it).")
    access = ChoiceField(choices=ApiToken.Access.choices, default=ApiToken.Access.WRITE)
    project = OwnedPrimaryKeyField(queryset=Project.objects.all(), required=False, allow_null=True,
                                   help_text="Bind it to one of your projects.")
    agent_id = CharField(max_length=200, required=False, default="", allow_blank=True,
                         help_text="Bind it to one agent_id.")
    for_end_users = JSONBooleanField(default=False, help_text="A service token acting for end users "
                                                                      "(X-Memento-End-User).")
    expires_in_days = serializers.IntegerField(min_value=1, max_value=3650, required=False, allow_null=True,
                                               help_text="Default: API_TOKEN_TTL_DAYS.")
    never_expires = JSONBooleanField(default=False)


class EndUserSerializer(serializers.ModelSerializer):
    class Meta:
        model = EndUser
        fields = ["id", "external_id", "created_at"]
        read_only_fields = fields
