"""System checks of the deployment itself. Registered without the deploy tag, so `check`, `serve`, every web
process and the worker run them (memento/startup.py), not only `check --deploy`."""

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
