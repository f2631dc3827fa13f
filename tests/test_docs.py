"""The README is the manual, docs/guide/ the reference, docs/records/ the measurements (issue 53, item 4): the
README stays short, every guide and record is reachable from it, and no relative link in the docs points nowhere."""

import re
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
    """The records cited /work/explore/phone_demo.py, a script of the machine they were measured on (issue 71, item
    14): the demo with settings changed is docs/records/scripts/demo_with.py, and a script that was not kept is said
    to be so where it is cited."""
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
