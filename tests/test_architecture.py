"""The import arrows docs/architecture.md promises, read from the source (no module is imported)."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "r1_gui"


def imported_modules(package: str) -> dict[str, set[str]]:
    """{file: the r1_gui modules it imports, at the top or inside functions} for every file of ``package``."""
    found = {}
    root = SRC / package if (SRC / package).is_dir() else SRC / f"{package}.py"
    for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[str(path.relative_to(SRC))] = {name for name in names if name.startswith("r1_gui")}
    return found


@pytest.mark.parametrize(
    "package, allowed",
    [
        ("actions", ("r1_gui.actions",)),
        ("scoring", ("r1_gui.actions", "r1_gui.scoring")),
    ],
)
def test_lower_layers_import_only_from_below(package, allowed):
    for path, names in imported_modules(package).items():
        outside = sorted(name for name in names if not name.startswith(allowed))
        assert not outside, f"{path} imports {outside}"


@pytest.mark.parametrize(
    "package, forbidden",
    [
        ("evaluation", ("r1_gui.rewards", "r1_gui.training")),
        ("rewards", ("r1_gui.evaluation", "r1_gui.training")),
        ("scoring", ("r1_gui.rewards", "r1_gui.evaluation")),
        ("checkpoints", ("r1_gui.training", "r1_gui.evaluation")),
        ("gui_datasets", ("r1_gui.training", "r1_gui.evaluation")),
        ("processing", ("r1_gui.training", "r1_gui.evaluation")),
    ],
)
def test_no_arrow_points_up(package, forbidden):
    for path, names in imported_modules(package).items():
        wrong = sorted(name for name in names if name.startswith(forbidden))
        assert not wrong, f"{path} imports {wrong}"
