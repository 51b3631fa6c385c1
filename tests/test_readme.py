"""The README's Python example runs as written, and its commands are the contract."""

import re
from pathlib import Path

from conftest import needs_shared_data

README = Path(__file__).resolve().parents[1] / "README.md"


@needs_shared_data
def test_readme_python_example_runs(capsys, tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    code = re.search(r"## In Python\n\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)  # the example saves model.json
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "budget: epsilon=1," in out and out.startswith("if ")
    from dpglass.models import load_model

    assert load_model(tmp_path / "model.json").privacy_ledger_.total()[0] <= 1.0


def test_readme_states_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert 'python -m pip install -e ".[dev]" && dpglass fit --dataset breast-cancer --epsilon 1' in text
    assert 'python -m pip install -e ".[dev]" && python -m pytest' in text


def test_readme_schema_example_is_a_valid_schema():
    import json

    from dpglass.schema import Schema

    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Your own table.*?```json\n(.*?)```", text, re.S).group(1)
    schema = Schema.from_dict(json.loads(block))
    assert schema.target == "income" and [c.name for c in schema.features][0] == "age"


def test_readme_is_a_short_user_guide():
    """Issue 29: the README is a user guide of at most 250 lines; measurements live in docs/benchmarks.md."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail to docs/guide.md or docs/benchmarks.md"


def _slug(header: str) -> str:
    """GitHub's anchor of a markdown header: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", header.strip().lower())
    return text.replace(" ", "-")


def test_relative_links_in_the_readme_and_docs_resolve():
    """Every relative link of README.md and docs/*.md names an existing file, and an anchor one of its headers."""
    root = README.parent
    broken = []
    for page in [README, *sorted((root / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and file.suffix == ".md":
                headers = re.findall(r"^#+ (.*)$", file.read_text(encoding="utf-8"), re.M)
                if anchor not in {_slug(h) for h in headers}:
                    broken.append(f"{page.name}: {target} (no such header)")
    assert not broken, broken
