from django.core import checks
from django.core.exceptions import ImproperlyConfigured


def run_startup_checks() -> None:
    """Fail at start-up, with the check's own words, rather than with a 500 on first use."""
    errors = [m for m in checks.run_checks() if m.is_serious()]
    if errors:
        raise ImproperlyConfigured("\n".join(f"{m.id}: {m.msg}" for m in errors))
