"""The import arrows docs/architecture.md promises, and that only r1_gui.seam touches trl's and transformers'
internals, read from the source (no module is imported)."""

import ast
import functools
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
        ("seam", ("r1_gui.seam",)),  # the seam wraps trl and transformers and nothing of r1_gui
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
        # asynchronous rollouts serve multi-turn GRPO from beside training: they import neither
        ("rollout", ("r1_gui.multi_turn", "r1_gui.training", "r1_gui.evaluation", "r1_gui.rewards", "r1_gui.demo")),
        ("builder", ("r1_gui.evaluation", "r1_gui.training", "r1_gui.rewards")),
        # generation serves training and evaluation alike: it imports neither (nor anything above them)
        (
            "generation",
            (
                "r1_gui.evaluation",
                "r1_gui.training",
                "r1_gui.multi_turn",
                "r1_gui.agent",
                "r1_gui.envs",
                "r1_gui.rewards",
                "r1_gui.demo",
                "r1_gui.play",
            ),
        ),  # fmt: skip
    ],
)
def test_no_arrow_points_up(package, forbidden):
    for path, names in imported_modules(package).items():
        wrong = sorted(name for name in names if name.startswith(forbidden))
        assert not wrong, f"{path} imports {wrong}"


# evaluation/'s rooms in floors, bottom up (docs/architecture.md, "evaluation/ in floors"). A room is a sub-package
# or a module at evaluation/'s top; the rooms of one floor are siblings (neither imports the other), and a room imports
# only rooms of lower floors. The package itself (`r1_gui.evaluation`, the public API) sits above them all.
EVALUATION_FLOORS = (
    ("errors", "intervals", "presets"),  # nothing of evaluation: the error type, 95% intervals, --protocol presets
    ("metrics", "config"),  # every metric's definition and value; EvalConfig
    ("run",),  # what both evaluations keep: the card, resume, the files' names, report.md's shared parts
    ("stats", "peers"),  # two runs compared; the peers' benchmarks and their metrics
    ("steps", "episodes"),  # the two evaluations, side by side
)


def evaluation_room(module: str) -> str | None:
    """The room of an r1_gui.evaluation module (``r1_gui.evaluation.run.resume`` -> ``run``); None for the package."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["r1_gui", "evaluation"] else None


def evaluation_arrows_up(graph: dict[str, set[str]]) -> list[str]:
    """Every import in ``graph`` from one evaluation room to another that is not on a lower floor, as
    `module -> imported (room floor -> room floor)`; a room in no floor is reported too."""
    floor = {room: number for number, rooms in enumerate(EVALUATION_FLOORS) for room in rooms}
    wrong = []
    for module, edges in sorted(graph.items()):
        room = evaluation_room(module)
        if room is None:
            continue
        if room not in floor:
            wrong.append(f"{module}: room {room!r} is on no floor of EVALUATION_FLOORS")
            continue
        for other in sorted(edges):
            other_room = evaluation_room(other)
            if other_room is None and other == "r1_gui.evaluation":
                wrong.append(f"{module} -> {other} (the package's API, above every room)")
            elif other_room not in (None, room) and floor.get(other_room, len(EVALUATION_FLOORS)) >= floor[room]:
                where = f"{floor.get(other_room, '?')}" if other_room in floor else "no floor"
                wrong.append(f"{module} -> {other} ({room} floor {floor[room]} -> {other_room} floor {where})")
    return wrong


def test_evaluation_rooms_import_only_from_lower_floors():
    """No import runs back up (or sideways) between evaluation/'s rooms (issue 70 item 5), and every room listed
    exists: a new room is placed on a floor, not left out."""
    graph = import_graph()
    rooms = {evaluation_room(module) for module in graph} - {None}
    listed = {room for floor in EVALUATION_FLOORS for room in floor}
    assert not listed - rooms, f"EVALUATION_FLOORS lists rooms that do not exist: {sorted(listed - rooms)}"
    wrong = evaluation_arrows_up(graph)
    assert not wrong, "imports that run back up inside evaluation/:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "module, imported",
    [
        ("r1_gui.evaluation.run.resume", "r1_gui.evaluation.steps.report"),  # a lower floor reaching up
        ("r1_gui.evaluation.steps.runner", "r1_gui.evaluation.episodes.run"),  # siblings
        ("r1_gui.evaluation.metrics", "r1_gui.evaluation"),  # a room importing the package's API
        ("r1_gui.evaluation.newroom.x", "r1_gui.evaluation.errors"),  # a room on no floor
    ],
)
def test_the_evaluation_floor_rule_catches(module, imported):
    """The rule is not vacuous: each of these imports is reported; an import inside a room and one down are not."""
    graph = {
        module: {imported},
        "r1_gui.evaluation.steps.cli": {"r1_gui.evaluation.steps.runner", "r1_gui.evaluation.run.protocol"},
    }
    assert [line for line in evaluation_arrows_up(graph) if line.startswith(module)], (module, imported)
    assert not [line for line in evaluation_arrows_up(graph) if line.startswith("r1_gui.evaluation.steps.cli")]


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
COMMANDS = ("r1_gui.grpo_gui", "r1_gui.sft", "r1_gui.play", "r1_gui.demo", "r1_gui.merge_lora", "r1_gui.settings_check")
# Where a command line is parsed: the commands and the argument modules they call.
PARSERS = ("r1_gui.grpo_gui", "r1_gui.sft", "r1_gui.settings_check", "r1_gui.training.args", "r1_gui.training.grpo",
           "r1_gui.training.sft", "r1_gui.training.precheck", "r1_gui.training.command_lines")  # fmt: skip
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


# -- the seam: the one place that touches trl's and transformers' private internals --------------------------------

SEAM = "r1_gui.seam"
# The classes r1_gui's trainers and generation subclass or drive, read from the installed sources (not imported):
# every private method they define and every private attribute they set on themselves.
UPSTREAM_CLASSES = [
    ("trl", "trainer/grpo_trainer.py", "GRPOTrainer"),
    ("trl", "trainer/sft_trainer.py", "SFTTrainer"),
    ("transformers", "trainer.py", "Trainer"),
    ("transformers", "generation/utils.py", "GenerationMixin"),
]
# Public-named methods of test_upstream_internals.METHODS that are the parents' public API, overridden anywhere.
PUBLIC_API = {"log"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@functools.cache
def upstream_private_names() -> frozenset[str]:
    import importlib.util

    names = set()
    for package, file, class_name in UPSTREAM_CLASSES:
        root = Path(importlib.util.find_spec(package).submodule_search_locations[0])  # finds, does not import
        tree = ast.parse((root / file).read_text())
        body = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name)
        for node in ast.walk(body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(node.name):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "self" and _private(node.attr):
                names.add(node.attr)
    return frozenset(names)


def internal_names() -> set[str]:
    """The names no module outside the seam may touch: the parents' private methods and attributes, and every
    trl/transformers internal tests/test_upstream_internals.py guards (public-named module functions and patched
    methods included; Pillow's are not trl's or transformers' and stay outside the seam's remit)."""
    from test_upstream_internals import CONFIG_ATTRIBUTES, GRPO_ATTRIBUTES, METHODS

    guarded = {name for where, name, _ in METHODS if not where.startswith("PIL.") and name not in PUBLIC_API}
    return upstream_private_names() | guarded | {a for a in GRPO_ATTRIBUTES if _private(a)} | set(CONFIG_ATTRIBUTES)


def breaches_in(source: str, where: str, internal: set[str]) -> list[str]:
    """Where a module's source touches an internal name: `where:line what`. Three checkable rules, read from the
    AST: (1) an import from trl or transformers of a private name, from a private module, or of a guarded internal;
    (2) a method definition (an override) named after a private method or guarded internal of the parents; (3) an
    attribute access `x.<name>`, or getattr/setattr/hasattr/delattr with the name as a string, of such a name."""
    breaches = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("trl", "transformers"):
            names = [alias.name for alias in node.names]
            if any(_private(part) for part in node.module.split(".")) or any(
                _private(name) or name in internal for name in names
            ):
                breaches.append(f"{where}:{node.lineno} imports {names} from {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in ("trl", "transformers") and any(_private(part) for part in parts):
                    breaches.append(f"{where}:{node.lineno} imports {alias.name}")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in internal:
                    breaches.append(f"{where}:{item.lineno} {node.name} overrides {item.name}")
        elif isinstance(node, ast.Attribute) and node.attr in internal:
            breaches.append(f"{where}:{node.lineno} touches .{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in internal
        ):
            breaches.append(f"{where}:{node.lineno} {node.func.id}(..., {node.args[1].value!r})")
    return breaches


def test_only_the_seam_touches_trl_and_transformers_internals():
    """A trl or transformers upgrade is checked against r1_gui.seam alone (issue 56 item 2): no other module
    imports, overrides or reaches one of their private names or the internals test_upstream_internals guards. The
    rest of r1_gui uses the seam's names (`GRPOSeam.policy_loss`, `record_metric`, `prefill_wrapped`, ...)."""
    internal = internal_names()
    breaches = [
        breach
        for module, path in sorted(MODULES.items())
        if module != SEAM and not module.startswith(SEAM + ".")
        for breach in breaches_in(path.read_text(), str(path.relative_to(SRC)), internal)
    ]
    assert not breaches, "outside r1_gui/seam (use or add a name there):\n" + "\n".join(breaches)


# Lines the rule must report wherever they stand outside the seam (most of them stood in r1_gui at 49cb7a3, before it).
BREACHES = [
    ("from trl.trainer.utils import pad", "imports ['pad'] from trl.trainer.utils"),
    ("from trl.trainer.utils import split_pixel_values_by_grid", "imports ['split_pixel_values_by_grid']"),
    ("from transformers.integrations.sdpa_attention import sdpa_attention_forward", "imports ['sdpa_attention_"),
    ("from transformers.trainer import _is_peft_model", "imports ['_is_peft_model']"),
    ("import transformers._private_module", "imports transformers._private_module"),
    ("class T(GRPOTrainer):\n    def _compute_loss(self, model, inputs): ...", "T overrides _compute_loss"),
    ("class T(GRPOTrainer):\n    def _generate_single_turn(self, ids): ...", "T overrides _generate_single_turn"),
    ("class T(Trainer):\n    def _load_from_checkpoint(self, path): ...", "T overrides _load_from_checkpoint"),
    ("class T(Trainer):\n    def get_batch_samples(self, it, n, device): ...", "T overrides get_batch_samples"),
    ("trainer._metrics['train']['x'].append(1.0)", "touches ._metrics"),
    ("trainer._tokenizer.padding_side = 'left'", "touches ._tokenizer"),
    ("trainer._dist.is_zero3", "touches ._dist"),
    ("trainer._entropy_bonus_enabled", "touches ._entropy_bonus_enabled"),
    ("GRPOTrainer._calculate_rewards(trainer, inputs, prompts, completions, ids)", "touches ._calculate_rewards"),
    ("config._attn_implementation = 'sdpa'", "touches ._attn_implementation"),
    ("compile_config._compile_all_devices = True", "touches ._compile_all_devices"),
    ("grpo_trainer.shuffle_sequence_dict = shuffle", "touches .shuffle_sequence_dict"),
    ("generator._prefill", "touches ._prefill"),
    ("getattr(module, '_prefill', None)", "getattr(..., '_prefill')"),
    ("encoder.get_image_features(pixel_values)", "touches .get_image_features"),
]  # fmt: skip


@pytest.mark.parametrize("source, breach", BREACHES, ids=[b for _, b in BREACHES])
def test_the_seam_rule_catches(source, breach):
    """The rule is not vacuous: each line, outside the seam, is reported."""
    assert any(breach in found for found in breaches_in(source, "outside.py", internal_names())), breach


def test_the_seam_rule_leaves_r1_guis_own_names_alone():
    """Names that are r1_gui's own (or public API of the parents) pass: subclassing trl's public `log`, the
    seam's public hooks, an r1_gui private helper."""
    source = (
        "class T(GRPOSeam):\n"
        "    def log(self, logs, start_time=None): ...\n"
        "    def policy_loss(self, model, inputs): ...\n"
        "    def _use_style_stop_token(self): ...\n"
        "trainer.record_metric('train', 'x', 1.0)\n"
        "from transformers import TrainerCallback\n"
    )
    assert breaches_in(source, "inside.py", internal_names()) == []


# -- the envs extra: openenv-core, BrowserGym and playwright stay out of `import r1_gui` and the local pool ---------

EXTRA_PACKAGES = ("openenv", "browsergym", "playwright")
# the only modules that import them; everything else imports these modules inside the function that needs them
EXTRA_HOMES = ("r1_gui.envs.serve", "r1_gui.envs.runtime.openenv_pool", "r1_gui.envs.browsergym")


def _in(module: str, homes: tuple[str, ...]) -> bool:
    return any(module == home or module.startswith(home + ".") for home in homes)


def test_the_envs_extra_is_imported_only_by_its_homes_and_only_when_used():
    """openenv-core pulls gradio and fastapi (5 s of CPU to import), BrowserGym playwright: a module outside
    EXTRA_HOMES never imports them, and no module imports a home at its top (only inside the function that serves,
    connects or builds a BrowserGym task), so `import r1_gui` and the default local pool stay as light as before."""
    wrong = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        top_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            where = f"{path.relative_to(SRC)}:{node.lineno}"
            if any(name.split(".")[0] in EXTRA_PACKAGES for name in names) and not _in(module, EXTRA_HOMES):
                wrong.append(f"{where} imports {names[0]}")
            if id(node) in top_level and not _in(module, EXTRA_HOMES):
                wrong += [f"{where} imports {name} at its top" for name in names if _in(name, EXTRA_HOMES)]
    assert not wrong, "\n".join(wrong)


def test_import_r1_gui_and_the_local_pool_load_none_of_the_envs_extra():
    """The rule above, as it runs: r1_gui, its environments, the backend choice and a local pool playing a reset."""
    import subprocess
    import sys

    code = (
        "import sys, r1_gui, r1_gui.envs, r1_gui.envs.contract, r1_gui.envs.runtime.backend as backend\n"
        "with backend.make_pool('r1_gui/Phone-v0', {}) as pool:\n"
        "    pool.reset([0], [1], [None])\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {EXTRA_PACKAGES!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
