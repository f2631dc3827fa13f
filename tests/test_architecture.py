"""The import arrows docs/architecture.md promises, read from the source (no module is imported)."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "r1_gui"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in SRC.rglob("*.py")}


def _resolve(name: str) -> str | None:
    """The r1_gui module a dotted name refers to (a module, or the package holding the imported name)."""
    while name and name not in MODULES:
        name = name.rsplit(".", 1)[0] if "." in name else ""
    return name or None


def import_graph() -> dict[str, set[str]]:
    """{module: the r1_gui modules it imports}, every import counted: at the top or inside functions, absolute or
    relative."""
    graph = {}
    for module, path in MODULES.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    edges.add(_resolve(full) if full in MODULES else _resolve(base))
            elif isinstance(node, ast.Import):
                edges.update(_resolve(alias.name) for alias in node.names)
        graph[module] = {edge for edge in edges if edge and edge != module}
    return graph


def imported_modules(package: str) -> dict[str, set[str]]:
    """{file: the r1_gui modules it imports} for every file of ``package`` (a folder or a module of r1_gui)."""
    graph = import_graph()
    prefix = f"r1_gui.{package}"
    return {
        str(MODULES[module].relative_to(SRC)): edges
        for module, edges in graph.items()
        if module == prefix or module.startswith(prefix + ".")
    }


def test_no_import_cycle():
    """Tarjan's strongly connected components of the module graph: every one must be a single module."""
    graph = import_graph()
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles (imports inside functions count): {cycles}"


@pytest.mark.parametrize(
    "package, allowed",
    [
        ("actions", ("r1_gui.actions",)),
        ("scoring", ("r1_gui.actions", "r1_gui.scoring")),
        ("episode_rewards", ("r1_gui.actions", "r1_gui.scoring")),
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
        # the wrong-way arrows of issue 30: rewards -> multi_turn, envs -> evaluation, evaluation -> builder,
        # training -> multi_turn (the --env dispatch is grpo_gui.py's)
        ("rewards", ("r1_gui.multi_turn", "r1_gui.agent", "r1_gui.envs")),
        ("envs", ("r1_gui.evaluation", "r1_gui.training", "r1_gui.multi_turn", "r1_gui.agent", "r1_gui.rewards")),
        ("evaluation", ("r1_gui.builder", "r1_gui.multi_turn", "r1_gui.synthetic")),
        ("training", ("r1_gui.multi_turn", "r1_gui.evaluation", "r1_gui.grpo_gui", "r1_gui.demo")),
        ("agent", ("r1_gui.training", "r1_gui.multi_turn", "r1_gui.evaluation", "r1_gui.rewards")),
        ("multi_turn", ("r1_gui.demo",)),
        ("builder", ("r1_gui.evaluation", "r1_gui.training", "r1_gui.rewards")),
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


# The commands a user types: the top floor. `r1_gui.tiny` is a command and also the home of `build_tiny_model`,
# which the demos and tests call, so it is not among them.
COMMANDS = ("r1_gui.grpo_gui", "r1_gui.sft", "r1_gui.play", "r1_gui.demo", "r1_gui.merge_lora")
# Where a command line is parsed: the commands and the argument modules they call.
PARSERS = ("r1_gui.grpo_gui", "r1_gui.sft", "r1_gui.training.args", "r1_gui.training.grpo", "r1_gui.training.sft",
           "r1_gui.training.precheck", "r1_gui.training.command_lines")  # fmt: skip
ARGV_PARSERS = {"parse_arguments", "parse_grpo_arguments", "parse_sft_arguments", "parse_args_and_config"}


def test_no_module_imports_a_command():
    """Arrows never run back up to a command: a demo trains through `training.grpo.train_single_step` or
    `multi_turn.train.train_multi_turn` with typed settings, not through grpo_gui.main (issue 53)."""
    for module, edges in import_graph().items():
        wrong = sorted(edges & set(COMMANDS)) if module not in COMMANDS else []
        assert not wrong, f"{MODULES[module].relative_to(SRC)} imports the command(s) {wrong}"


def test_no_module_builds_flags_for_another_command():
    """Python callers pass settings as values (`grpo_arguments(max_steps=90, ...)`), never a list of flag strings
    that the command's parser reads back: no module but the parsers calls one, and none writes a `*_argv` builder."""
    for module, path in MODULES.items():
        if module in PARSERS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                assert name not in ARGV_PARSERS, f"{path.relative_to(SRC)}:{node.lineno} parses a flag list ({name})"
            if isinstance(node, ast.FunctionDef):
                assert not node.name.endswith("argv"), (
                    f"{path.relative_to(SRC)}:{node.lineno} builds flags ({node.name})"
                )
