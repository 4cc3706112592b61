"""`manage.py serve`: everything a newcomer needs in one process tree.

Applies migrations, makes sure the demo login exists, then runs gunicorn (two web processes) and a Celery worker
with its beat scheduler until Ctrl-C. The embedded PostgreSQL (when DATABASE_URL is unset) lives as long as any of
these processes. A lock file refuses a second `serve` from the same folder.
"""

import fcntl
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from memento.embedded_db import prune_dead_handles


def acquire_lock(path):
    """Hold an exclusive lock on `path` for the life of the process, or explain who holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")  # noqa: SIM115 (kept open: the lock lives as long as the file handle)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        pid = handle.read().strip() or "unknown"
        raise CommandError(
            f"Memento is already running from {settings.BASE_DIR} (process {pid}). Stop it with Ctrl-C in its "
            f"terminal before starting it again; its data is safe."
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def ensure_demo_user(username: str, password: str):
    User = get_user_model()
    user, created = User.objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True, "email": f"{username}@example.com"}
    )
    if created:
        user.set_password(password)
        user.save()
    token, _ = Token.objects.get_or_create(user=user)
    return user, token, created


class Command(BaseCommand):
    help = "Migrate, create the demo login and serve the app with a background worker until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--web-workers", type=int, default=int(os.environ.get("WEB_WORKERS", "2")))
        parser.add_argument("--no-worker", action="store_true", help="Do not start the Celery worker.")

    def handle(self, *args, **options):
        lock = acquire_lock(settings.STATE_DIR / "serve.lock")
        call_command("migrate", interactive=False, verbosity=1)
        call_command("check")
        call_command("collectstatic", interactive=False, verbosity=0)
        username = os.environ.get("DEMO_USERNAME", "demo")
        password = os.environ.get("DEMO_PASSWORD", "memento-demo")
        _, token, _ = ensure_demo_user(username, password)

        python = sys.executable
        children = [
            subprocess.Popen([
                python, "-m", "gunicorn", "memento.wsgi:application",
                "--bind", f"{options['host']}:{options['port']}",
                "--workers", str(options["web_workers"]), "--threads", "4",
                "--access-logfile", "-", "--graceful-timeout", "5",
            ])
        ]
        if not options["no_worker"]:
            children.append(subprocess.Popen([
                python, "-m", "celery", "-A", "memento", "worker", "--beat", "--loglevel", "INFO",
                "--concurrency", "1", "--schedule", str(settings.STATE_DIR / "celerybeat-schedule"),
            ]))

        base = f"http://{options['host']}:{options['port']}"
        self.stdout.write(self.style.SUCCESS(
            f"\nMemento is starting on {base}/\n"
            f"  panel:    {base}/         login {username} / {password}\n"
            f"  admin:    {base}/admin/   (same login)\n"
            f"  API:      {base}/api/     header 'Authorization: Token {token.key}'\n"
            f"  API docs: {base}/api/docs/\n"
            f"  MCP:      {base}/mcp      header 'Authorization: Bearer {token.key}'\n"
            f"Ctrl-C stops the web server, the worker and the embedded database.\n"
        ))

        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(child.poll() is None for child in children):
                time.sleep(0.5)
        finally:
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    child.kill()
            lock.close()
            if "DATABASE_URL" not in os.environ:
                # our atexit handler then stops the embedded server unless someone else still uses it
                prune_dead_handles(settings.STATE_DIR / "pgdata")
        failed = [c for c in children if c.returncode not in (0, -signal.SIGTERM, None)]
        if failed and not stopping:
            raise CommandError(f"A server process exited unexpectedly (exit code {failed[0].returncode}).")
