"""The per-address throttle of the login forms (panel and admin), as POST /api/auth/token/ has (memento/signin.py).

django-axes locks a username + address pair after wrong passwords, which does nothing against one address trying
many usernames: each try still costs a password hash (48 anonymous logins raised another user's median latency
from 24 ms to 1.9 s). Posts to a login form count against the API's `auth` rate (API_THROTTLE_AUTH) for the
client's address, in the shared cache (CACHE_URL), under the very key the token endpoint uses: one budget of
sign-in attempts per address, whichever door they knock on, and across web processes.
"""

import math
from functools import wraps

from django.shortcuts import render
from rest_framework.throttling import SimpleRateThrottle


class SignInThrottle(SimpleRateThrottle):
    """The `auth` rate per client address (the address the API throttles count: NUM_PROXIES)."""

    scope = "auth"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def throttle_sign_in(view):
    """Wrap a login view: a POST over the address's rate is a 429 page with Retry-After, before any password is
    checked. Showing the form costs nothing and is never throttled."""

    @wraps(view)
    def throttled(request, *args, **kwargs):
        if request.method == "POST":
            throttle = SignInThrottle()
            if not throttle.allow_request(request, None):
                seconds = max(1, math.ceil(throttle.wait() or 1))
                response = render(request, "panel/sign_in_throttled.html", {"seconds": seconds}, status=429)
                response["Retry-After"] = str(seconds)
                return response
        return view(request, *args, **kwargs)

    return throttled
