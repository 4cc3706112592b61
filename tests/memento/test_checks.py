"""The deployment checks: the public default SECRET_KEY is refused whenever DEBUG is off."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from memento import startup


def test_the_public_secret_key_is_refused_without_debug(settings):
    settings.DEBUG = False
    settings.SECRET_KEY = settings.INSECURE_SECRET_KEY
    with pytest.raises(SystemCheckError, match="memento.E002"):
        call_command("check")
    with pytest.raises(Exception, match="memento.E002"):
        startup.run_startup_checks()  # what gunicorn's and Celery's processes run before serving


def test_the_public_secret_key_is_allowed_with_debug(settings):
    settings.DEBUG = True
    settings.SECRET_KEY = settings.INSECURE_SECRET_KEY
    call_command("check")


def test_any_other_key_passes(settings):
    settings.DEBUG = False
    settings.SECRET_KEY = "another-long-random-key-0123456789abcdefghijklmnopqrstuvwxyz"
    call_command("check")


def test_one_role_for_web_and_maintenance_is_warned_about(settings):
    from memento.checks import web_and_maintenance_roles_differ

    assert web_and_maintenance_roles_differ(None) == []  # the embedded server's two roles
    settings.MAINTENANCE_DATABASE_URL = settings.DATABASE_URL
    assert [m.id for m in web_and_maintenance_roles_differ(None)] == ["memento.W003"]
