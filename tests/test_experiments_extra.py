"""The experiments are a package beside the library (issue 27): dpglass imports none of the experiments extra.

Each check runs in a fresh interpreter, so what other tests imported does not count.
"""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
EXTRA = ("matplotlib", "tqdm", "joblib")  # pyproject.toml's [experiments] extra

# Records which file first imports each package of the extra (the frame that runs the import statement).
_WATCH = textwrap.dedent("""
    import sys
    IMPORTERS = {}

    class _Watch:
        def find_spec(self, name, path=None, target=None):
            if name in %r and name not in IMPORTERS:
                frame = sys._getframe(1)
                while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                    frame = frame.f_back
                IMPORTERS[name] = frame.f_code.co_filename if frame is not None else "?"
            return None

    sys.meta_path.insert(0, _Watch())
""" % (EXTRA,))


def _run(code: str, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _WATCH + textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def _importers(stdout: str) -> dict:
    return ast.literal_eval(stdout.strip().splitlines()[-1])


def test_importing_the_library_imports_nothing_of_the_extra():
    """``import dpglass.models, dpglass.cli`` (and the CLI's parser) import neither matplotlib nor tqdm; joblib only
    through scikit-learn, which depends on it (``import sklearn`` imports joblib), never from dpglass's own code."""
    run = _run("""
        import dpglass, dpglass.models, dpglass.cli
        dpglass.cli.build_parser()  # what every dpglass command builds first (it registers `dpglass reproduce`)
        print({name: IMPORTERS.get(name) for name in %r if name in sys.modules})
    """ % (EXTRA,))
    assert run.returncode == 0, run.stderr
    importers = _importers(run.stdout)
    assert "matplotlib" not in importers and "tqdm" not in importers, importers
    assert set(importers) <= {"joblib"}, importers
    if "joblib" in importers:
        assert "sklearn" in Path(importers["joblib"]).parts, importers


def test_dpglass_fit_imports_nothing_of_the_extra(tmp_path):
    """A whole ``dpglass fit`` run (embedded data) imports neither matplotlib nor tqdm, and no dpglass code joblib."""
    run = _run("""
        from dpglass.cli import main
        code = main(["fit", "--dataset", "breast-cancer", "--epsilon", "1", "--seed", "0"])
        assert code == 0, code
        print({name: IMPORTERS.get(name) for name in %r if name in sys.modules})
    """ % (EXTRA,), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    importers = _importers(run.stdout)
    assert "matplotlib" not in importers and "tqdm" not in importers, importers
    for name, where in importers.items():
        assert "dpglass" not in Path(where).parts and "dpglass_experiments" not in Path(where).parts, (name, where)


def test_no_library_module_imports_the_extra_or_the_experiments():
    """No module of src/dpglass imports matplotlib, tqdm, joblib or dpglass_experiments (function-level too)."""
    bad = []
    for path in sorted((SRC / "dpglass").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            bad += [(str(path.relative_to(SRC)), n) for n in names if n.split(".")[0] in EXTRA + ("dpglass_experiments",)]
    # model.plot() is the one place matplotlib is read, as the optional `plot` extra (a clear error without it)
    assert [b for b in bad if b != ("dpglass/models/readout/plot.py", "matplotlib.figure")] == []


# joblib is not blocked here: scikit-learn, a core dependency, needs it, so no dpglass install lacks it
@pytest.mark.parametrize("blocked", ["matplotlib", "tqdm"])
def test_reproduce_without_the_extra_says_how_to_install_it(tmp_path, blocked):
    """Without a package of the extra, ``dpglass reproduce`` prints one line naming the extra, before anything runs."""
    out = tmp_path / "out"
    run = _run("""
        sys.modules[%r] = None  # as if not installed: importing it raises ImportError
        from dpglass.cli import main
        sys.exit(main(sys.argv[1:]))
    """ % (blocked,), "reproduce", "ldp", "--quick", "--no-progress", "--out", str(out))
    assert run.returncode == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("dpglass reproduce: error:") and blocked in lines[0], lines
    assert 'pip install "dpglass[experiments]"' in lines[0], lines
    assert not out.exists()


def test_reproduce_help_names_the_extra():
    run = subprocess.run([sys.executable, "-m", "dpglass.cli", "reproduce", "--help"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert 'pip install "dpglass[experiments]"' in " ".join(run.stdout.split())
    for name in ("rule-lists", "boosting", "accounting", "ldp", "gbdt"):
        assert name in run.stdout


def test_the_extra_is_in_dev():
    """CI installs .[dev] only: dev has every requirement of the experiments extra; the core has none of it."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    assert set(extras["experiments"]) <= set(extras["dev"])
    core = {req.split(">")[0].split("=")[0].split("[")[0].strip() for req in project["dependencies"]}
    assert not core & set(EXTRA), core
