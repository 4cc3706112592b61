"""`GET /api/schema/`: the OpenAPI schema, built once per process and then served from memory.

drf-spectacular builds the schema on every request, and two builds at once in one process race: the first use of
an extension class imports its target, and a thread that finds it half-done fails (`'NoneType' object has no
attribute 'startswith'`, a 500 with a traceback; a suite test met it when a busy machine made its readiness probe
time out and ask again). One build at a time, kept for the process's life: the schema depends on the code only,
never on the request's user or on the database, so a build costs no query and is done once.
"""

import threading

from drf_spectacular.views import SpectacularAPIView
from rest_framework.response import Response

_lock = threading.Lock()
_built: dict = {}


class SchemaView(SpectacularAPIView):
    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        with _lock:
            if version not in _built:
                generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
                _built[version] = generator.get_schema(request=request, public=self.serve_public)
        return Response(data=_built[version], headers={
            "Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'})
