"""What a web process sets up when gunicorn loads `memento.wsgi`."""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests.web import database_env

PROBE = ("import gc, json, memento.wsgi; from memories import bookkeeping; "
         "print(json.dumps({'frozen': gc.get_freeze_count(), 'background': bookkeeping._background}))")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_web_process_freezes_what_it_loaded_and_writes_touches_in_the_background():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=settings.BASE_DIR, capture_output=True, text=True,
                          env={**os.environ, **database_env()}, timeout=120, check=True)
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    # the app, the model and their libraries are out of the collector's full passes (hundreds of thousands)
    assert probe["frozen"] > 100_000
    assert probe["background"] is True
