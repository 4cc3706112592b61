"""Rate limits per API token, beside DRF's per user (an end user is a user: their own allowance)."""

from oauth2_provider.models import AbstractAccessToken
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    """API_THROTTLE_TOKEN requests per token (an API token, or an OAuth access token); requests without a token
    (sessions, anonymous) are not counted here."""

    scope = "token"

    def get_cache_key(self, request, view):
        token = request.auth
        if isinstance(token, ApiToken):
            return self.cache_format % {"scope": self.scope, "ident": token.pk}
        if isinstance(token, AbstractAccessToken):
            return self.cache_format % {"scope": self.scope, "ident": f"oauth-{token.pk}"}
        return None
