"""System checks of the deployment itself. Registered without the deploy tag, so `check`, `serve`, every web
process and the worker run them (memento/startup.py), not only `check --deploy`."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security)
def secret_key_is_not_public(app_configs, **kwargs):
    """The default key is in the source code: with it anyone can forge sessions, password-reset links and
    signed values. Only DEBUG (a developer's own machine) may run with it."""
    if settings.DEBUG or settings.SECRET_KEY != settings.INSECURE_SECRET_KEY:
        return []
    return [checks.Error(
        "SECRET_KEY is the public default while DEBUG is off.",
        hint="Set DJANGO_SECRET_KEY to a long random value, e.g. the output of "
             "`python -c 'import secrets; print(secrets.token_urlsafe(50))'` (`./dev.sh serve` on 127.0.0.1 makes "
             "one for itself in .memento/secret_key).",
        id="memento.E002",
    )]


@checks.register(checks.Tags.security, checks.Tags.database)
def web_and_maintenance_roles_differ(app_configs, **kwargs):
    """With one role for both URLs, either web processes may bypass row-level security (the maintenance role) or
    workers and commands see no rows (the app role): memento/roles.py."""
    app = urlsplit(settings.DATABASE_URL).username
    if app != urlsplit(settings.MAINTENANCE_DATABASE_URL).username:
        return []
    return [checks.Warning(
        f"DATABASE_URL and MAINTENANCE_DATABASE_URL log in as the same role ({app}).",
        hint="Web processes should log in as a role that owns nothing and cannot bypass row-level security, "
             "workers and commands as memento_maintenance: README, \"Running in production\", has the statements.",
        id="memento.W003",
    )]
