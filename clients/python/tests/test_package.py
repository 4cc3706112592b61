"""The client package never imports Django (it runs in agents' processes, not Memento's)."""

import subprocess
import sys
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def test_importing_the_clients_loads_no_django():
    code = ("import sys, memento_client.client, memento_client.langgraph, memento_client.openai_memory; "
            "assert not [m for m in sys.modules if m == 'django' or m.startswith('django.')], 'django imported'")
    done = subprocess.run([sys.executable, "-c", code], cwd=PACKAGE_ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(PACKAGE_ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
