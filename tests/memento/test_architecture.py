"""The import rule of ARCHITECTURE.md: an app imports only from the floors below its own, never sideways or up.

Read from the source with `ast`, so imports inside functions count too (they hide the graph just the same).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# app -> floor; an app may import only apps on a lower floor
FLOORS = {
    "memento": 7,
    "panel": 6,
    "accounts": 5, "imports": 5, "webhooks": 5,
    "conversations": 4, "documents": 4, "store": 4,
    "profiles": 3,
    "memories": 2, "extraction": 2,
    "integrations": 1, "core": 1,
    "observability": 0,
}

# Shared types, not behaviour: core's retrying task base names the providers' two error types as transient.
ALLOWED = {("core", "integrations.embeddings"), ("core", "integrations.llm")}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def upward_or_sideways_imports(app: str) -> list[str]:
    wrong = []
    for path in sorted((ROOT / app).rglob("*.py")):
        for line, module in imported_modules(path):
            target = module.split(".")[0]
            if target == app or target not in FLOORS or (app, module) in ALLOWED:
                continue
            if FLOORS[target] >= FLOORS[app]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return wrong


@pytest.mark.parametrize("app", sorted(FLOORS))
def test_app_imports_only_lower_floors(app):
    assert upward_or_sideways_imports(app) == []


def test_the_rule_sees_an_import_inside_a_function(tmp_path, monkeypatch):
    """The checker itself: a function-level import of a sibling app is reported."""
    app = tmp_path / "documents"
    app.mkdir()
    (app / "views.py").write_text("def f():\n    from conversations.models import Message\n    return Message\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert upward_or_sideways_imports("documents") == ["documents/views.py:2 imports conversations.models"]
