"""The README is the manual, docs/guide/ the reference, docs/records/ the measurements (issue 53, item 4): the
README stays short, every guide and record is reachable from it, and no relative link in the docs points nowhere."""

import ast
import functools
import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MAX_README_LINES = 470  # 450 until issue 69 added "Environments from elsewhere" (13 lines), 465 until issue 68's async
# README.md and every Markdown file under docs/, plus the two other top-level documents that link into them.
DOCUMENTS = sorted([README, REPO / "CHANGELOG.md", REPO / "bench" / "README.md", *(REPO / "docs").rglob("*.md")])
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def outside_code(text: str) -> list[str]:
    """The lines of a Markdown file that are not inside a fenced code block."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchors(path: Path) -> set[str]:
    """The heading anchors GitHub gives a Markdown file: lowercase, punctuation dropped, spaces as hyphens, and -1,
    -2, ... after a repeated one."""
    seen: dict[str, int] = {}
    for line in outside_code(path.read_text(encoding="utf-8")):
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = "".join(
            ch for ch in heading.group(1).lower() if ch in " -_" or unicodedata.category(ch)[0] in "LMN"
        ).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def relative_links(path: Path) -> list[str]:
    links = [m.group(1) for line in outside_code(path.read_text(encoding="utf-8")) for m in LINK.finditer(line)]
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]  # http:, https:, mailto:


def test_readme_is_a_manual_of_at_most_470_lines():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, (
        f"README.md has {lines} lines (at most {MAX_README_LINES}): move reference to docs/guide/ and dated "
        "measurements to docs/records/, and link to them"
    )


@pytest.mark.parametrize("folder", ["guide", "records"])
def test_every_guide_and_record_is_linked_from_the_readme(folder):
    files = sorted((REPO / "docs" / folder).glob("*.md"))
    assert files, f"docs/{folder}/ holds no Markdown file"
    linked = {(README.parent / link.split("#", 1)[0]).resolve() for link in relative_links(README)}
    missing = [str(f.relative_to(REPO)) for f in files if f.resolve() not in linked]
    assert not missing, f"README.md links to none of {missing}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file_and_heading_that_exist(document):
    broken = []
    for link in relative_links(document):
        target, _, anchor = link.partition("#")
        path = (document.parent / target).resolve() if target else document
        if not path.exists():
            broken.append(f"{link}: no {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {path.relative_to(REPO)}")
    assert not broken, f"{document.relative_to(REPO)}: " + "; ".join(broken)


def test_the_records_cite_scripts_that_are_in_the_repository():
    """The records cited /work/explore/phone_demo.py, a script not in the repository, of the machine they were
    measured on (issue 71, item 14): the demo with settings changed is docs/records/scripts/demo_with.py, and a script
    that was not kept is said to be so where it is cited."""
    import importlib.util

    from r1_gui.cli_errors import UserError

    for record in sorted((REPO / "docs" / "records").glob("*.md")):
        text = record.read_text()
        for cited in sorted(set(re.findall(r"/work/explore/\s*([\w.]+\.py)", text))):
            said = [m.start() for m in re.finditer(re.escape(cited), text)]
            near = [" ".join(text[max(0, at - 200) : at + 400].split()) for at in said]  # the sentence citing it
            kept = any("not in the repository" in part or "now `docs/records/scripts/" in part for part in near)
            assert kept, f"{record.name} cites /work/explore/{cited} without saying it is not in the repository"
    spec = importlib.util.spec_from_file_location("demo_with", REPO / "docs" / "records" / "scripts" / "demo_with.py")
    demo_with = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo_with)
    config = demo_with.settings("phone", '{"tasks": ["open_and_return"], "sft_steps": 800}')
    assert config.tasks == ("open_and_return",) and config.sft_steps == 800
    assert demo_with.settings("web_ms", "{}").sft_check_every == 1  # the multi-step web demo's own default
    with pytest.raises(UserError, match=r"MultiTurnDemoConfig has no setting\(s\) \['nope'\]"):
        demo_with.settings("phone", '{"nope": 1}')


# -- references that cannot go stale (issue 70 item 7) ----------------------------------------------------------------
# Every repository path and every dotted r1_gui name that README.md, docs/ and the docstrings cite must exist: a moved
# module or a renamed function fails here, naming where it is cited. CHANGELOG.md is history: it names what was.

SRC = REPO / "src" / "r1_gui"
TRACKED = [
    REPO / line
    for line in subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
]
TOP_FOLDERS = {path.relative_to(REPO).parts[0] for path in TRACKED if len(path.relative_to(REPO).parts) > 1}
ROOMS = {path.name for path in SRC.iterdir() if path.is_dir() and not path.name.startswith("__")}
BASENAMES = {path.name for path in TRACKED}
# A cited file: a name with one of these endings (a results file such as metrics.json or report.md is what a run
# writes, so .json, .jsonl, .md and the pictures count only under a folder of the repository).
SOURCE_ENDINGS = (".py", ".sh", ".jinja", ".toml")
FILE_ENDINGS = (*SOURCE_ENDINGS, ".md", ".json", ".jsonl", ".yaml", ".yml", ".txt", ".png", ".parquet", ".csv")
# Files of other projects (the peers, trl, AITW) and of a user's, cited by their names: not the repository's.
FOREIGN_FILES = {
    "r1gui.py": "GUI-R1's reward file",
    "dataset.py": "GUI-R1's dataset code",
    "eval_omni.py": "GUI-R1's evaluation script",
    "eval/eval_omni.py": "GUI-R1's evaluation script",
    "eval_screenspot.py": "GUI-R1's ScreenSpot script",
    "eval/eval_screenspot.py": "GUI-R1's ScreenSpot script",
    "test_gui.py": "a sibling entry point r1_gui chose not to have (docs/guide/evaluation.md)",
    "action_matching.py": "the AITW reference's matching rules",
    "grpo_trainer.py": "trl's GRPOTrainer",
    "my_rewards.py": "a user's reward file (README's recipe)",
    "my_turn_rewards.py": "a user's per-turn reward file",
    "my_module.py": "a user's environment module",
    "file.py": "a user's file, in a module:function example",
}
PATH = re.compile(r"(?<![\w./@-])(/?(?:[\w.-]+/)*[\w.-]+(?:/|\.\w+))(?::(\d+))?")
DOTTED = re.compile(r"(?<![\w.])r1_gui(?:\.[A-Za-z_]\w*)+")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+|www\.\S+")
# Where docstrings are read: the package and the scripts beside it.
DOCSTRING_FOLDERS = ("src", "eval", "dataset", "bench", "local_scripts", "docs/records/scripts", "tests")
# What a record says in the paragraph of a command whose script is not kept (outside the repository)
NOT_KEPT = ("not in the repository", "historical")


def docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every module, class and function docstring of a Python file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                found.append((node.body[0].lineno, text))
    return found


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each block of a Markdown file: a paragraph or a list item (a command wrapped over lines
    stays whole, with what is said beside it), and each line of a code block, heading or table on its own."""
    blocks, current, fenced = [], [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        alone = fenced or line.startswith(("#", "|"))
        if current and (alone or not line.strip() or re.match(r"\s*(?:[-*]|\d+\.)\s", line)):
            blocks.append(current)
            current = []
        if line.strip():
            current.append((number, line))
        if alone and current:
            blocks.append(current)
            current = []
    return [(block[0][0], "\n".join(line for _, line in block)) for block in [*blocks, current] if block]


def cited_texts() -> list[tuple[Path, int, str]]:
    """(file, line, text) of every block of README.md and docs/ and every docstring of the code."""
    texts = []
    for document in [README, REPO / "bench" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        texts += [(document, line, block) for line, block in paragraphs(document.read_text(encoding="utf-8"))]
    for path in TRACKED:
        if path.suffix == ".py" and str(path.relative_to(REPO)).startswith(DOCSTRING_FOLDERS):
            texts += [(path, line, text) for line, text in docstrings(path)]
    return texts


def _roots(where: Path) -> list[Path]:
    """The folders a path cited in ``where`` may be relative to: the repository, the package (src/r1_gui, src/), the
    citing file's folder and the folders above it."""
    roots = [REPO, SRC, SRC.parent]
    folder = where.parent
    while folder != REPO and REPO in folder.parents:
        roots.append(folder)
        folder = folder.parent
    return roots


def stale_path(cited: str, line: str | None, where: Path) -> str | None:
    """Why a path cited in ``where`` is stale (None: it exists, or it is not a repository path: an output folder,
    an environment id, a result file)."""
    cited = cited.rstrip(".")
    if cited in FOREIGN_FILES or not cited.endswith((*FILE_ENDINGS, "/")):
        return None
    if cited.startswith("/"):
        return f"{cited}: a script outside the repository" if cited.endswith(SOURCE_ENDINGS) else None
    parts = cited.split("/")
    is_file = not cited.endswith("/")
    if len([part for part in parts if part]) == 1:
        if not cited.endswith(SOURCE_ENDINGS) or cited in BASENAMES:
            return None
        return f"{cited}: no file of the repository has this name"
    if parts[0] in ("r1_gui", *ROOMS) and is_file and not cited.endswith(SOURCE_ENDINGS):
        return None  # an id (r1_gui/Phone-v0) or a run's file
    if parts[0] not in (*TOP_FOLDERS, "r1_gui", *ROOMS) and not any(
        (root / parts[0]).is_dir() for root in _roots(where)[3:]
    ):
        return None  # an output folder (runs/demo, OUTPUT_DIR/gallery/)
    for root in _roots(where):
        target = root / cited
        if target.is_file() or (not is_file and target.is_dir()):
            if line and int(line) > len(target.read_text(encoding="utf-8").splitlines()):
                return f"{cited}:{line}: the file has {len(target.read_text(encoding='utf-8').splitlines())} lines"
            return None
    return f"{cited}: no such {'file' if is_file else 'folder'}"


@functools.cache
def _defined(path: Path) -> dict[str, set[str] | None]:
    """{name a module defines at its top: the names its class defines (methods, attributes), or None}."""
    names: dict[str, set[str] | None] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        for inner in [node, *(getattr(node, "body", []) if isinstance(node, (ast.If, ast.Try)) else [])]:
            if isinstance(inner, ast.ClassDef):
                members = {
                    item.name for item in inner.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                }
                members |= {target.id for item in ast.walk(inner) if isinstance(item, (ast.Assign, ast.AnnAssign))
                            for target in (item.targets if isinstance(item, ast.Assign) else [item.target])
                            if isinstance(target, ast.Name)}  # fmt: skip
                members |= {item.attr for item in ast.walk(inner) if isinstance(item, ast.Attribute)
                            and getattr(item.value, "id", None) == "self" and isinstance(item.ctx, ast.Store)}  # fmt: skip
                names[inner.name] = members
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names[inner.name] = None
            elif isinstance(inner, (ast.Assign, ast.AnnAssign)):
                for target in inner.targets if isinstance(inner, ast.Assign) else [inner.target]:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            names[name.id] = None
            elif isinstance(inner, (ast.Import, ast.ImportFrom)):
                names.update({(alias.asname or alias.name).split(".")[0]: None for alias in inner.names})
    return names


def stale_name(dotted: str) -> str | None:
    """Why a dotted r1_gui name is stale: no module, no such name in its module, or no such member of its class."""
    parts = dotted.split(".")
    for count in range(len(parts), 0, -1):
        base = SRC.parent.joinpath(*parts[:count])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            break
    else:
        return f"{dotted}: no module"
    rest = parts[count:]
    if not rest:
        return None
    defined = _defined(module)
    if rest[0] not in defined:
        return f"{dotted}: {'.'.join(parts[:count])} defines no {rest[0]}"
    members = defined[rest[0]]
    if len(rest) > 1 and members is not None and rest[1] not in members:
        return f"{dotted}: {rest[0]} has no {rest[1]}"
    return None


def stale_references() -> list[str]:
    stale = []
    for path, line, text in cited_texts():
        where = f"{path.relative_to(REPO)}:{line}"
        clean = URL.sub(" ", text)
        for match in PATH.finditer(clean):
            reason = stale_path(match.group(1), match.group(2), path)
            said = " ".join(text.split())
            if reason and not ("outside the repository" in reason and any(words in said for words in NOT_KEPT)):
                stale.append(f"{where}: {reason}")
        for match in DOTTED.finditer(clean):
            reason = stale_name(match.group(0))
            if reason:
                stale.append(f"{where}: {reason}")
    return stale


def test_every_cited_path_and_name_exists():
    """Every repository path (a file with its line, a folder) and every dotted r1_gui name in README.md, docs/ and the
    docstrings exists; a command of a record whose script is not in the repository says it is historical."""
    stale = stale_references()
    assert not stale, f"{len(stale)} stale references:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    "cited, stale",
    [
        ("evaluation/episode_cli.py", True),  # a room's file that moved (docs/architecture.md until issue 70)
        ("web_expert.py", True),  # a bare name no file has
        ("src/r1_gui/multi_turn/trainer.py:100000", True),  # a line past the file's end
        ("docs/records/scripts/", False),
        ("evaluation/episodes/cli.py", False),
        ("src/r1_gui/multi_turn/trainer.py:1", False),
        ("runs/demo/report.md", False),  # a run's output, not the repository's
        ("r1_gui/Phone-v0", False),  # an environment id
        ("/work/explore/phone_demo.py", True),  # a script outside the repository
    ],
)
def test_the_path_rule_catches(cited, stale):
    path, _, line = cited.partition(":")
    assert bool(stale_path(path, line or None, README)) is stale, stale_path(path, line or None, README)


@pytest.mark.parametrize(
    "dotted, stale",
    [
        ("r1_gui.evaluation.stats.intervals.wilson", True),  # moved to r1_gui.evaluation.intervals (issue 70 item 5)
        ("r1_gui.evaluation.metrics.no_such_metric", True),
        ("r1_gui.multi_turn.trainer.MultiTurnGRPOTrainer.no_such_method", True),
        ("r1_gui.evaluation.intervals.wilson", False),
        ("r1_gui.multi_turn.trainer.MultiTurnGRPOTrainer._rollout", False),
        ("r1_gui.evaluation.stats.compare", False),
    ],
)
def test_the_name_rule_catches(dotted, stale):
    assert bool(stale_name(dotted)) is stale, stale_name(dotted)


# -- the walk of one multi-turn step (issue 70 item 9) ----------------------------------------------------------------
# docs/guide/multi_turn_step.md cites code as `file:line::Class.method` (a def at that line), `file::Class.method` (a
# def or class of that name in the file: r1_gui's own, by name) or `file:line -> name` (a line that says `name`). trl's
# and transformers' files are read where they are installed.

STEP_WALK = REPO / "docs" / "guide" / "multi_turn_step.md"
CITATION = re.compile(r"`([\w/.]+\.py)(?::(\d+))?(?:::([\w.]+)| -> (\w+))`")


def cited_file(path: str) -> Path:
    """A cited file: r1_gui's from the repository, trl's and transformers' from their installed packages."""
    import importlib.util

    package = path.split("/", 1)[0]
    if package in ("trl", "transformers"):
        return Path(importlib.util.find_spec(package).submodule_search_locations[0]).parent / path
    return REPO / path


def definition(path: Path, qualified: str) -> ast.AST | None:
    """The class or function ``Class.method`` (or ``function``) of a Python file; None if it defines none."""
    nodes = ast.parse(path.read_text(encoding="utf-8")).body
    found = None
    for name in qualified.split("."):
        found = next(
            (
                node
                for node in nodes
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
            ),
            None,
        )
        if found is None:
            return None
        nodes = found.body
    return found


def wrong_citations(text: str) -> tuple[list[str], int]:
    """(what is wrong with each citation of ``text``, how many it holds)."""
    wrong, count = [], 0
    for match in CITATION.finditer(" ".join(text.split())):
        path, line, qualified, called = match.groups()
        count += 1
        target = cited_file(path)
        if not target.is_file():
            wrong.append(f"{match.group(0)}: no file {target}")
        elif qualified:
            node = definition(target, qualified)
            if node is None:
                wrong.append(f"{match.group(0)}: {path} defines no {qualified}")
            elif line and node.lineno != int(line):
                wrong.append(f"{match.group(0)}: {qualified} is defined at line {node.lineno}")
        elif line and called:
            lines = target.read_text(encoding="utf-8").splitlines()
            if not (0 < int(line) <= len(lines) and called in lines[int(line) - 1]):
                said = sorted(
                    (n for n, text in enumerate(lines, 1) if called in text), key=lambda n: abs(n - int(line))
                )
                wrong.append(f"{match.group(0)}: line {line} does not say {called} (the nearest that do: {said[:3]})")
        else:
            wrong.append(f"{match.group(0)}: a call is cited with its line (`file:line -> name`)")
    return wrong, count


def test_the_walk_of_a_multi_turn_step_cites_code_that_is_there():
    """Every def, class and call line docs/guide/multi_turn_step.md cites exists where it says (issue 70 item 9)."""
    wrong, count = wrong_citations(STEP_WALK.read_text(encoding="utf-8"))
    assert count >= 40, f"the walk cites {count} places: its citations no longer read as `file:line::name`?"
    assert not wrong, "stale citations in docs/guide/multi_turn_step.md:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "citation",
    [
        "`trl/trainer/grpo_trainer.py:1523::GRPOTrainer._prepare_inputs`",  # the def is at 1522
        "`trl/trainer/grpo_trainer.py:2211 -> rollout_func`",  # the call is at 2210
        "`src/r1_gui/multi_turn/trainer.py::MultiTurnGRPOTrainer._no_such_hook`",
        "`src/r1_gui/multi_turn/no_such_file.py::x`",
    ],
)
def test_the_walk_rule_catches(citation):
    wrong, count = wrong_citations(citation)
    assert count == 1 and wrong, citation
