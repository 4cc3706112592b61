"""Rate limits per API token, beside DRF's per user (an end user is a user: their own allowance)."""

from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    """API_THROTTLE_TOKEN requests per token; requests without a token (sessions, anonymous) are not counted
    here."""

    scope = "token"

    def get_cache_key(self, request, view):
        token = request.auth
        if not isinstance(token, ApiToken):
            return None
        return self.cache_format % {"scope": self.scope, "ident": token.pk}
