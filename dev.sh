#!/usr/bin/env bash
# Memento's two everyday commands (see README.md):
#   ./dev.sh serve   set everything up and serve the app (embedded PostgreSQL, migrations, demo login, worker)
#   ./dev.sh test    run the whole test suite
# Both create .venv and install requirements.txt first when needed.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3

setup() {
  if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
  fi
  local stamp=.venv/.requirements.sha256 want
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    # the first run downloads PyTorch, spaCy's model and the rest (a few minutes): pip shows what it is doing
    echo "Installing requirements into .venv (the first time takes a few minutes) ..."
    # (its errors go to stderr, untouched; pipefail stops the script when pip fails)
    .venv/bin/pip install --disable-pip-version-check -r requirements.txt \
      | awk '/^(Collecting|Downloading|Installing|Successfully)/ { print; fflush() }'
    echo "$want" >"$stamp"
  fi
}

case "${1:-}" in
  serve)
    shift
    setup
    exec .venv/bin/python manage.py serve "$@"
    ;;
  test)
    shift
    setup
    exec .venv/bin/python -m pytest "$@"
    ;;
  setup)
    setup
    ;;
  *)
    echo "usage: ./dev.sh serve | test [pytest args] | setup" >&2
    exit 2
    ;;
esac
