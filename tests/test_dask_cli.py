"""What ``dpglass fit --data 'dir/*.parquet'`` shows (issue 26, items 3 and 11).

Item 3: the number of partitions (files written every k rows: ceil(n/k))
tells the number of records, which is private, so nothing the Dask CLI prints
may depend on how the same records are split into files.  Item 11: a data
error is one message, the client's, not a traceback from every worker for
every try of every partition.

In-process runs use the session's LocalCluster (``dask_client`` in
conftest.py) by its address; one run starts the CLI in its own process with
its own LocalCluster, as a user does, so that the workers' stderr is the
command's.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from dpglass.cli import main  # noqa: E402

N = 1800


def _frame(seed=0, numeric=False):
    rng = np.random.default_rng(seed)
    X = (rng.random((N, 6)) < np.linspace(0.2, 0.6, 6)).astype(np.uint8)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    if numeric:
        df["age"] = np.round(rng.uniform(17, 90, N), 1)
    df["y"] = (((X[:, 0] & X[:, 1]) | X[:, 2]) ^ (rng.random(N) < 0.1)).astype(int)
    return df


def _write(df, folder, parts):
    """``df`` as ``parts`` parquet files in ``folder`` (rows in order, split as evenly as they go)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[rows].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


def _fit(argv, capfd):
    rc = main(["fit", *argv])
    out, err = capfd.readouterr()
    return rc, out, err


def _worker_failures(client) -> set:
    """The "Compute Failed" records in the workers' logs (each with its time stamp)."""
    return {msg for logs in client.get_worker_logs().values() for _, msg in logs if "Compute Failed" in msg}


# ------------------------------------------------------------------ item 3
LAYOUT_FITS = {
    "dp-rule-list": (False, ["--model", "dp-rule-list"]),
    "smooth-boost-stumps": (False, ["--model", "smooth-boost-stumps"]),
    "dp-gbdt-quantile": (True, ["--model", "dp-gbdt", "--bounds", "age=17:90", "--param", "binning=quantile",
                                "--param", "n_estimators=5"]),
}


@pytest.mark.parametrize("name", list(LAYOUT_FITS))
def test_dask_cli_prints_the_same_for_3_and_5_files_of_the_same_records(dask_client, tmp_path, capfd, monkeypatch,
                                                                       name):
    numeric, model = LAYOUT_FITS[name]
    df = _frame(numeric=numeric)
    printed = {}
    for parts in (3, 5):
        home = tmp_path / f"layout{parts}"
        _write(df, home / "data", parts)
        monkeypatch.chdir(home)  # the same relative --data in both runs: the printed path is the same
        rc, out, err = _fit(["--data", "data/*.parquet", "--target", "y", *model, "--epsilon", "1",
                             "--classes", "0,1", "--seed", "7", "--scheduler", dask_client.scheduler.address],
                            capfd)
        assert rc == 0, err
        printed[parts] = out, err
        assert not re.search(r"partition|%|Completed", out + err), out + err
    # same seed, same records: the same model and ledger, and nothing else differs either
    assert printed[3] == printed[5]


def test_elapsed_time_is_the_only_progress_and_only_on_a_terminal():
    from dpglass.cli.fit.through_dask import _elapsed

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    shown = Terminal()
    with _elapsed("fitting through Dask", stream=shown, interval=0.05):
        import time

        time.sleep(0.3)
    ticks = [t for t in shown.getvalue().split("\r") if t]
    assert ticks[-1] == "\x1b[2K"  # erased at the end
    assert ticks[:-1] and all(re.fullmatch(r"fitting through Dask: \d+ s", t) for t in ticks[:-1]), ticks
    piped = io.StringIO()  # a file or a pipe gets nothing
    with _elapsed("fitting through Dask", stream=piped, interval=0.01):
        time.sleep(0.05)
    assert piped.getvalue() == ""


# ----------------------------------------------------------------- item 11
def _bad_value(df):
    bad = df.copy()
    bad["f3"] = bad["f3"].where(np.arange(len(bad)) % 97 != 5, 7)  # a 7 in every file
    return bad


def _bad_label(df):
    bad = df.copy()
    bad.loc[bad.index[-3], "y"] = 4
    return bad


def _infinite_age(df):
    bad = df.copy()
    bad["age"] = bad["age"].where(np.arange(len(bad)) % 211 != 8, np.inf)
    return bad


GBDT = ["--model", "dp-gbdt", "--bounds", "age=17:90", "--param", "n_estimators=3"]
DECLARED = ["--classes", "0,1"]
BAD_DATA = {  # (numeric columns, corruption, a column file 2 lacks, options, the one line the user reads)
    "non-binary value": (False, _bad_value, None, ["--model", "dp-rule-list", *DECLARED],
                         r"a partition: column 'f3' has the value 7;"),
    "label outside classes": (False, _bad_label, None, ["--model", "smooth-boost-stumps", *DECLARED],
                              r"a partition: y has the label 4, outside classes=\[0, 1\]\.$"),
    "missing feature column": (False, None, "f4", ["--model", "dp-rule-list", *DECLARED],
                               r"a partition: a column is missing when it is read .*'f4'"),
    # classes undeclared: the labels are read in a pass of their own first (reading one column, dask may put
    # several files in a partition: the number is not the file's)
    "missing label column": (False, None, "y", ["--model", "dp-rule-list"],
                             r"a partition: a column is missing when it is read .*'y'"),
    # dp-gbdt's checks run in models/gbdt/binned.py, inside a map over the partitions (binning) or in its own task
    "infinite value, binned on the workers": (True, _infinite_age, None, GBDT + DECLARED,
                                              r"column 'age' has infinite values"),
    "infinite value, quantile grid counts": (True, _infinite_age, None, GBDT + DECLARED + ["--param",
                                                                                           "binning=quantile"],
                                             r"column 'age' has infinite values"),
}


def _bad_files(case, folder):
    """The case's data as 6 parquet files: every file has the bad value, or file 2 lacks a column."""
    numeric, corrupt, lacks, options, _ = BAD_DATA[case]
    df = _frame(numeric=numeric)
    glob = _write(corrupt(df) if corrupt else df, folder, 6)
    if lacks:
        df.iloc[:40].drop(columns=lacks).to_parquet(folder / "part2.parquet")
    return ["--data", glob, "--target", "y", *options, "--epsilon", "1"]


@pytest.mark.parametrize("case", list(BAD_DATA))
def test_dask_data_error_is_one_line_and_no_worker_logs_it(dask_client, tmp_path, capfd, case):
    before = _worker_failures(dask_client)
    rc, out, err = _fit([*_bad_files(case, tmp_path / "data"), "--scheduler", dask_client.scheduler.address], capfd)
    assert rc == 2
    logged = _worker_failures(dask_client) - before
    assert not logged, f"{len(logged)} worker log records, the first:\n{sorted(logged)[0]}"
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpglass fit: error: "), err
    assert re.search(BAD_DATA[case][-1], lines[0]), lines[0]
    assert "Traceback" not in out + err


@pytest.mark.parametrize("case", [c for c, (numeric, *_) in BAD_DATA.items() if not numeric])
def test_dask_data_error_does_not_state_the_number_of_partitions(dask_client, tmp_path, capfd, case):
    rc, _, err = _fit([*_bad_files(case, tmp_path / "data"), "--scheduler", dask_client.scheduler.address], capfd)
    assert rc == 2 and not re.search(r"\bof 6\b|\b6 partitions", err), err


def test_binned_data_error_does_not_state_the_number_of_partitions(dask_client, tmp_path, capfd):
    case = "infinite value, binned on the workers"
    rc, _, err = _fit([*_bad_files(case, tmp_path / "data"), "--scheduler", dask_client.scheduler.address], capfd)
    assert rc == 2 and "infinite values" in err
    assert not re.search(r"\bof 6\b", err), err


def test_dask_cli_data_error_through_its_own_cluster_is_one_line(tmp_path):
    """The user's command, with its own LocalCluster: everything the workers write lands in its stderr."""
    glob = _write(_bad_value(_frame()), tmp_path / "data", 9)
    run = _own_cluster_fit(["--data", glob, "--target", "y", "--classes", "0,1", "--epsilon", "1"], cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == ["dpglass fit: error: a partition: column 'f3' has the value 7; dpglass works "
                                       "on binary features (0/1). Binarize the data first "
                                       "(dpglass.datasets.Binarizer with public thresholds)."], run.stderr
    assert run.stdout.splitlines() == [f"Dask scheduler {_address(run.stdout)}: fitting on the cluster"]


def _address(out: str) -> str:
    found = re.match(r"Dask scheduler (\S+):", out)
    return found.group(1) if found else "?"


def _own_cluster_fit(argv, cwd):
    return subprocess.run([sys.executable, "-c", "import sys; from dpglass.cli import main; sys.exit(main())",
                           "fit", *argv], capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.mark.slow
def test_dask_cli_through_its_own_cluster_prints_the_same_for_3_and_5_files(tmp_path):
    """As the in-process test, with the command's own LocalCluster: the workers' stderr is compared too."""
    df = _frame(numeric=True)
    printed = {}
    for parts in (3, 5):
        _write(df, tmp_path / f"layout{parts}" / "data", parts)
        run = _own_cluster_fit(["--data", "data/*.parquet", "--target", "y", *GBDT, "--param", "binning=quantile",
                                "--epsilon", "1", "--seed", "3"], cwd=tmp_path / f"layout{parts}")
        assert run.returncode == 0, run.stderr
        out = run.stdout.replace(_address(run.stdout), "<scheduler>", 1)  # a free port, different each time
        printed[parts] = out, run.stderr
    assert printed[3] == printed[5]
    assert printed[3][1] == ""
