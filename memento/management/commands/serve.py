"""`manage.py serve`: everything a newcomer needs in one process tree.

Applies migrations, makes sure the demo login exists, then runs gunicorn (two web processes) and a Celery worker
with its beat scheduler until Ctrl-C. The demo login (a random password, printed once) and a secret key of the
checkout's own are for a developer's machine: made on a loopback address (the default 127.0.0.1), never when
serving any other. The embedded PostgreSQL (when DATABASE_URL is unset) lives as long as any of these processes.
A lock file refuses a second `serve` from the same folder. A worker that dies is started again (`Supervisor`);
only the web server's end ends `serve`.
"""

import fcntl
import ipaddress
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from accounts.services import token_obtain
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


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name (other than localhost), or "" for every interface
        return False


def ensure_local_secret_key() -> None:
    """Without DJANGO_SECRET_KEY, a random key of this checkout's own (.memento/secret_key), made at the first
    start; settings/base.py reads it in every process, this one included from now on."""
    if os.environ.get("DJANGO_SECRET_KEY"):
        return
    path = settings.LOCAL_SECRET_KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    settings.SECRET_KEY = path.read_text().strip()


def ensure_private_media_root() -> None:
    """MEDIA_ROOT (the uploads) made, or tightened when this user owns it, to 0700: uploads are for the server's
    user only (FILE_UPLOAD_PERMISSIONS 0600 for the files and FILE_UPLOAD_DIRECTORY_PERMISSIONS for the folders
    below it)."""
    path = Path(settings.MEDIA_ROOT)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid == os.getuid():
        path.chmod(0o700)


def ensure_demo_user(username: str):
    """The demo superuser and a new API token (only its digest is stored, so each start makes one; earlier ones
    stay valid until they expire or are revoked in the panel); the password is random, made and returned only
    when the user is created (None afterwards: it is not stored anywhere but as a hash)."""
    User = get_user_model()
    password = None
    user = User.objects.filter(username=username).first()
    if user is None:
        password = secrets.token_urlsafe(12)
        user = User.objects.create_superuser(username=username, email=f"{username}@example.com", password=password)
    return user, token_obtain(user=user).key, password


def login_lines(host: str, base: str) -> str:
    """How to sign in, for the start-up banner: on loopback the demo login (made at the first start) and its
    token; on any other address no demo login at all."""
    if not is_loopback(host):
        return (f"  panel:    {base}/   no demo login off loopback: `manage.py createsuperuser` makes one\n"
                f"  API docs: {base}/api/docs/\n")
    username = os.environ.get("DEMO_USERNAME", "demo")
    _, key, password = ensure_demo_user(username)
    login = (f"login {username} / {password}   (a superuser; the password is shown this once)" if password else
             f"login {username}   (password shown at the first start; `manage.py changepassword {username}`)")
    return (
        f"  panel:    {base}/         {login}\n"
        f"  admin:    {base}/admin/   (same login)\n"
        f"  API:      {base}/api/     header 'Authorization: Token {key}'\n"
        f"  API docs: {base}/api/docs/\n"
        f"  MCP:      {base}/mcp      header 'Authorization: Bearer {key}'\n"
    )


# One torch thread per request thread in the web processes: they embed short queries from several threads at once,
# and two cores shared by intra-op threads serve ~30% fewer queries a second than one thread each (the worker,
# which embeds documents in big batches alone, keeps torch's default).
WEB_ENV = {"OMP_NUM_THREADS": "1"}


def prepare_metrics_dir() -> None:
    """One folder where every process it starts writes its Prometheus figures, emptied at each start (figures of
    processes gone must not add up with the new ones): a scrape of the web server then covers the workers too
    (observability.metrics)."""
    folder = Path(os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(settings.STATE_DIR / "prometheus")))
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()


def port_taken(host: str, port: int) -> bool:
    """Whether something already listens on `host`:`port` (bound here as gunicorn binds, with SO_REUSEADDR)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def export_onnx_model() -> None:
    """The local model for ONNX Runtime is exported once per machine (7-20 s here): do it before the web processes
    start, in a process of its own (torch stays out of this one), rather than in the first search."""
    if settings.EMBEDDING_PROVIDER != "local" or settings.EMBEDDING_RUNTIME != "onnx":
        return
    from integrations.onnx_model import OnnxEncoder, onnx_available
    from integrations.tokens import model_dir

    if onnx_available() and not OnnxEncoder(model_dir(), settings.EMBEDDING_ONNX_DIR, batch_size=1).path.exists():
        subprocess.run([sys.executable, "-c", "import django; django.setup(); from integrations.embeddings import "
                        "get_provider; get_provider().embed(['ready'])"], cwd=settings.BASE_DIR, check=False)


class Supervisor:
    """The processes `serve` runs: the web server, whose end ends `serve`, and the workers, each started again
    when it dies (killed, out of memory, a crash): the web server keeps answering meanwhile, and the new worker
    sends again the work the dead one held (memento/celery.py). A worker that keeps dying is started again after
    a pause that doubles each time, up to RESTART_MAX_PAUSE, and back to the first once one has lived that long."""

    RESTART_FIRST_PAUSE = 1.0
    RESTART_MAX_PAUSE = 60.0

    def __init__(self, *, web: list[str], env: dict, workers: list[list[str]], say=print):
        self.web_command, self.env, self.say = web, env, say
        self.web: subprocess.Popen | None = None
        self.slots = [{"command": command, "process": None, "started": 0.0, "pause": self.RESTART_FIRST_PAUSE,
                       "restart_at": None} for command in workers]
        self.restarts = 0

    @property
    def workers(self) -> list[subprocess.Popen]:
        return [slot["process"] for slot in self.slots if slot["process"] is not None]

    def start(self) -> None:
        self.web = subprocess.Popen(self.web_command, env=self.env, start_new_session=True)
        for slot in self.slots:
            self._start(slot)

    def _start(self, slot: dict) -> None:
        slot["process"] = subprocess.Popen(slot["command"], env=self.env, start_new_session=True)
        slot["started"] = time.monotonic()

    def check(self) -> bool:
        """False once the web server has ended; a dead worker is started again (after its pause)."""
        if self.web.poll() is not None:
            return False
        now = time.monotonic()
        for slot in self.slots:
            process = slot["process"]
            if process.poll() is None:
                continue
            if slot["restart_at"] is None:
                if now - slot["started"] >= self.RESTART_MAX_PAUSE:
                    slot["pause"] = self.RESTART_FIRST_PAUSE  # it had been running fine: not a crash loop
                slot["restart_at"] = now + slot["pause"]
                self.say(f"A worker stopped (exit code {process.returncode}); starting it again in "
                         f"{slot['pause']:g} s. The web server keeps running.")
                slot["pause"] = min(slot["pause"] * 2, self.RESTART_MAX_PAUSE)
            elif now >= slot["restart_at"]:
                slot["restart_at"] = None
                self.restarts += 1
                self._start(slot)
        return True

    def stop(self) -> None:
        children = [child for child in (self.web, *self.workers) if child is not None]
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()


class Command(BaseCommand):
    help = "Migrate, create the demo login and serve the app with a background worker until Ctrl-C."
    requires_system_checks = []  # handle() runs them, once the local secret key is in place

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--web-workers", type=int, default=int(os.environ.get("WEB_WORKERS", "2")))
        # Two request threads a process: with four, a process's threads queue for its one interpreter lock and
        # every request costs more CPU the more run at once (bench/load.py at 100 requests/s: 12.7 ms of web CPU a
        # request and search p95 461 ms with 2 x 4; 9.4 ms and 60 ms with 2 x 2). Requests beyond the threads
        # wait in the listen queue, where waiting costs nothing.
        parser.add_argument("--web-threads", type=int, default=int(os.environ.get("WEB_THREADS", "2")))
        parser.add_argument("--no-worker", action="store_true", help="Do not start the Celery worker.")

    def handle(self, *args, **options):
        lock = acquire_lock(settings.STATE_DIR / "serve.lock")
        if port_taken(options["host"], options["port"]):  # before a token is made and the workers start
            raise CommandError(
                f"Port {options['port']} on {options['host']} is in use (another server is listening there). Stop "
                f"it, or serve on another port: PORT={options['port'] + 1} ./dev.sh serve")
        ensure_private_media_root()
        if is_loopback(options["host"]):
            ensure_local_secret_key()
        call_command("migrate", interactive=False, verbosity=1)
        call_command("check")  # e.g. refuses the public SECRET_KEY off loopback (memento/checks.py)
        call_command("collectstatic", interactive=False, verbosity=0)
        export_onnx_model()
        prepare_metrics_dir()
        base = f"http://{options['host']}:{options['port']}"
        logins = login_lines(options["host"], base)

        python = sys.executable
        web = [
            python, "-m", "gunicorn", "memento.wsgi:application",
            "--bind", f"{options['host']}:{options['port']}",
            "--workers", str(options["web_workers"]), "--threads", str(options["web_threads"]),
            "--access-logfile", "-", "--graceful-timeout", "5",
            # longer than clients' idle keep-alive (httpx: 5 s), so a client never reuses a connection the
            # server is closing at that moment (a ReadError under load)
            "--keep-alive", "10",
            # gunicorn's largest request line (its default 4094 bytes refused a 4,000-character context query
            # with its other parameters: a 414); longer URLs are still a 414, which the schema documents
            "--limit-request-line", "8190",
        ]
        # Two workers: documents on one of their own (DOCUMENT_TASK_QUEUE), so that another user's message is
        # extracted while someone's book is read; everything else, and beat, on the other.
        queue = os.environ.get("DOCUMENT_TASK_QUEUE") or "documents"
        celery = [python, "-m", "celery", "-A", "memento", "worker", "--loglevel", "INFO", "--concurrency", "1"]
        workers = [] if options["no_worker"] else [
            [*celery, "-n", "main@%h", "-Q", "celery", "--beat",
             "--schedule", str(settings.STATE_DIR / "celerybeat-schedule")],
            [*celery, "-n", "documents@%h", "-Q", queue],
        ]
        supervisor = Supervisor(web=web, env=WEB_ENV | os.environ | {"DOCUMENT_TASK_QUEUE": queue},
                                workers=workers, say=lambda text: self.stderr.write(text))
        supervisor.start()

        self.stdout.write(self.style.SUCCESS(
            f"\nMemento is starting on {base}/\n{logins}"
            "Ctrl-C stops the web server, the worker and the embedded database.\n"
        ))

        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        # The children run in sessions of their own: a terminal's Ctrl-C (or hang-up) reaches this process only,
        # which stops them with one SIGTERM each (gunicorn's and Celery's graceful stop). Sent to the whole group,
        # it made gunicorn's master kill its workers mid-shutdown ("SIGKILL! Perhaps out of memory?") and Celery
        # take a second signal as a cold shutdown.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, stop)
        try:
            while not stopping and supervisor.check():
                time.sleep(0.5)
        finally:
            supervisor.stop()
            lock.close()
            if "DATABASE_URL" not in os.environ:
                # our atexit handler then stops the embedded server unless someone else still uses it
                prune_dead_handles(settings.STATE_DIR / "pgdata")
        code = supervisor.web.returncode
        if not stopping and code not in (0, -signal.SIGTERM, None):
            raise CommandError(f"The web server exited unexpectedly (exit code {code}).")
