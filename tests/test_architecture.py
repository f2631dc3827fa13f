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
        ("vision_attention", ("r1_gui.training", "r1_gui.evaluation")),
    ],
)
def test_no_arrow_points_up(package, forbidden):
    for path, names in imported_modules(package).items():
        wrong = sorted(name for name in names if name.startswith(forbidden))
        assert not wrong, f"{path} imports {wrong}"


def where_things_are() -> list[tuple[str, str]]:
    """(what, where) of every row of README.md's "Where things are" table."""
    readme = (SRC.parents[1] / "README.md").read_text()
    table = readme.split("## Where things are\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = [line.strip("|").split(" | ") for line in table.splitlines()[2:]]
    return [(what.strip(), where.strip()) for what, where in rows]


def test_where_things_are_names_every_module_and_only_real_files():
    rows = where_things_are()
    text = "\n".join(f"{what} | {where}" for what, where in rows)
    for path in sorted(SRC.iterdir()):
        if path.name.startswith("_") or path.name == "__pycache__":
            continue
        named = f"src/r1_gui/{path.name}/" if path.is_dir() else f"src/r1_gui/{path.name}"
        in_shared_row = any(where == "`src/r1_gui/`" and f"`{path.name}`" in what for what, where in rows)
        assert f"`{named}`" in text or named + "`" in text or in_shared_row, f"README's table never names {named}"
    for what, where in rows:
        folders = [SRC.parents[1] / p.strip("`") for p in where.replace(";", ",").split(", ") if "src/" in p]
        for cell_path in [p.strip("`(") for p in where.replace(";", ",").split() if p.strip("`(),").startswith("src/")]:
            assert (SRC.parents[1] / cell_path.strip("`(),")).exists(), f"README's table names {cell_path}: none"
        for name in [word.strip("`(),") for word in what.split() if word.strip("`(),").endswith(".py")]:
            if "/" in name:
                assert (SRC.parents[1] / name).exists(), f"README's table names {name}: none"
            elif folders:
                roots = [f if f.is_dir() else f.parent for f in folders]
                assert any((root / name).is_file() for root in roots), f"{name} is in none of {where}"


def test_moved_module_paths_still_import_and_say_where_to():
    """Paths the README named before issue 22 forward to the new modules, with a FutureWarning naming them."""
    from r1_gui import vision_attention
    from r1_gui.checkpoints import load_model
    from r1_gui.scoring import aitw
    from r1_gui.training.lora import LORA_TARGET_MODULES

    with pytest.warns(FutureWarning, match=r"r1_gui\.aitw moved to r1_gui\.scoring\.aitw"):
        from r1_gui.aitw import step_success
    assert step_success is aitw.step_success
    with pytest.warns(FutureWarning, match="import AITW_NO_POINT from r1_gui.scoring.aitw"):
        from r1_gui.aitw import NO_POINT
    assert NO_POINT == aitw.AITW_NO_POINT
    with pytest.warns(FutureWarning, match=r"r1_gui\.lora moved to r1_gui\.training\.lora"):
        from r1_gui.lora import LORA_TARGET_MODULES as old_targets
    assert old_targets == LORA_TARGET_MODULES
    with pytest.warns(FutureWarning, match=r"r1_gui\.lora moved to r1_gui\.checkpoints"):
        from r1_gui.lora import load_model as old_load_model
    assert old_load_model is load_model
    with pytest.warns(FutureWarning, match=r"r1_gui\.training\.vision_attention moved to r1_gui\.vision_attention"):
        from r1_gui.training.vision_attention import use_batched_window_attention
    assert use_batched_window_attention is vision_attention.use_batched_window_attention
    with pytest.raises(ImportError):
        from r1_gui.aitw import no_such_name  # noqa: F401


def test_nothing_in_r1_gui_imports_a_moved_path():
    moved = ("r1_gui.aitw", "r1_gui.lora", "r1_gui.trainer", "r1_gui.training.vision_attention")
    packages = [path.stem for path in SRC.iterdir() if not path.name.startswith("_") and path.suffix in ("", ".py")]
    for package in sorted(set(packages) - {"aitw", "lora", "trainer", "chat_template"}):
        for path, names in imported_modules(package).items():
            old = sorted(name for name in names if name in moved or name.startswith(tuple(m + "." for m in moved)))
            assert not old, f"{path} imports {old}"
