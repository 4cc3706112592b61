"""Who may do what: passwords and sign-in (lockout), API tokens, OAuth 2.1, DRF's authentication, throttles and
parsers, the OpenAPI schema, sessions, browser security headers and production hardening (SECURITY.md)."""

from datetime import timedelta

from memento.settings.base import env

# --- Auth, API. ----------------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# The personal panel (panel/) is the site's front door; staff still sign in to /admin/ through its own page.
LOGIN_URL = "panel:login"
LOGIN_REDIRECT_URL = "panel:overview"
LOGOUT_REDIRECT_URL = "panel:login"

# API tokens (accounts/): a new token expires this many days after it is made unless its maker chooses otherwise
# (0: never); the panel, POST /api/tokens/ and POST /api/auth/token/ make them.
API_TOKEN_TTL_DAYS = env.int("API_TOKEN_TTL_DAYS", default=90)
# What a read-only token may still POST to (core/grants.py): views whose POST only reads, and views that check
# each call themselves (a tool that writes, a store op that writes). Every other unsafe request is refused to it.
TOKEN_READS_BY_POST = frozenset({"memory-search", "chunk-search", "store-search", "store-namespaces"})
TOKEN_CHECKS_EACH_CALL = frozenset({"tool-call", "mcp", "store-batch"})

# OAuth 2.1 for /mcp and the API (django-oauth-toolkit, accounts/oauth.py): what the MCP authorization specification
# asks of a server (authorization code with PKCE S256, metadata, dynamic client registration, resource indicators),
# nothing older (no implicit or password grant), and tokens stored as digests only.
OAUTH2_PROVIDER = {
    "SCOPES": {"read": "Read your memories, conversations and documents",
               "write": "Add, change and delete your memories, conversations and documents"},
    "DEFAULT_SCOPES": ["read", "write"],
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth.Validator",
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_ACCESS_TOKEN_SECONDS", default=3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env.int("OAUTH_REFRESH_TOKEN_DAYS", default=30) * 86400,
    "ROTATE_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,  # never in a URL's query string
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # RFC 9207: the redirect names its issuer
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,  # a replayed refresh token revokes its whole family
    "DCR_ENABLED": True,  # MCP clients register themselves (RFC 7591); a person still consents to each one
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Memento",
}
# MCP clients on a person's machine (Claude Code, Cursor, VS Code) receive the code on a loopback http:// redirect
# (RFC 8252), so http redirect addresses stay allowed; the consent page shows the address before anything is sent.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]

BEHIND_PROXY = env.bool("DJANGO_BEHIND_PROXY", default=False)  # one reverse proxy in front, setting X-Forwarded-*

# Sign-in lockout (django-axes), for the panel, the admin and POST /api/auth/token/ alike: after
# LOGIN_FAILURE_LIMIT wrong passwords for one username from one IP address, that pair is refused (429) for
# LOGIN_COOLOFF_MINUTES. Further tries while locked out do not extend it, so the real user gets back in; failures
# are kept in the database, shared by every web process.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # no row per successful login (a table that would only grow)
AXES_LOCKOUT_CALLABLE = "memento.signin.lockout_response"
AXES_CLIENT_IP_CALLABLE = "memento.signin.client_address"

# Bad input is a 400, never a 500: JSON bodies (and tool-call arguments) nested deeper than this are refused before
# parsing (1,000+ levels made the parser raise RecursionError); no body the API documents nests past ~10.
API_JSON_MAX_DEPTH = env.int("API_JSON_MAX_DEPTH", default=64)
REST_FRAMEWORK = {
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser", "rest_framework.parsers.FormParser", "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "accounts.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated", "core.grants.WriteAccess"],
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
        "accounts.throttles.TokenRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="60/minute"),
        "user": env.str("API_THROTTLE_USER", default="6000/minute"),
        # per API token, beside per user: one leaked or runaway agent's token cannot use up its user's allowance
        "token": env.str("API_THROTTLE_TOKEN", default="6000/minute"),
        # POST /api/auth/token/ per IP address, right or wrong password: each try costs a password hash (~0.5 s)
        "auth": env.str("API_THROTTLE_AUTH", default="10/minute"),
    },
    # Whose address a throttle (and the sign-in lockout) counts: the peer's, or behind a proxy the one it appends
    # to X-Forwarded-For. DRF's default (None) would take the whole header, which any client can vary at will.
    "NUM_PROXIES": 1 if BEHIND_PROXY else 0,
    "DEFAULT_PAGINATION_CLASS": "core.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "core.api.AutoSchema",  # documents every error status an operation can answer
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memento API",
    "DESCRIPTION": "Long-term memory for LLM agents: store, version and search memories per user.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request bodies as components of their own (`SearchRequest` beside `SearchResponse`...), so that a text field
    # that refuses "" says `minLength: 1` where it is read and not where it is answered. Without it the schema let
    # "" through where the API answers 400 "may not be blank", and schemathesis, learning from that answer that
    # the field must matter, took it for required: its "Missing required property: ranking" case was then
    # accepted (ST201). Read-only fields also leave the request components.
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"ReminderStatusEnum": "profiles.models.Reminder.Status",
                            "ConsolidationRunStatusEnum": "profiles.models.ConsolidationRun.Status"},
}

# --- Sessions and browser security headers (SECURITY.md, "Browsers"). ------------------------------------------
# A panel or admin sign-in lasts SESSION_DAYS from sign-in (a password change ends the user's other sessions; the
# cookie is never readable by scripts and is not sent on cross-site requests other than top-level links).
SESSION_COOKIE_AGE = env.int("SESSION_DAYS", default=14) * 24 * 3600
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_EXPIRE_AT_BROWSER_CLOSE = False
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True  # X-Content-Type-Options: nosniff
SECURE_REFERRER_POLICY = "same-origin"  # no URL (ids, search words) leaves for other sites in Referer
X_FRAME_OPTIONS = "DENY"  # and frame-ancestors 'none' below, for browsers that read only one of them
# Content-Security-Policy (django-csp) on every response: scripts, styles, fonts and fetches come from this site
# only, so an injected inline <script>, on* attribute or javascript: URL does not run. The panel's one script is
# panel/static/panel/panel.js; the API docs load Swagger UI's init script from /api/docs/?script= and may use
# inline styles (memento/urls.py relaxes style-src there only).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# --- Production hardening (all on when DJANGO_DEBUG is off and HTTPS is declared). ---------------------------
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=False)
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None
