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
