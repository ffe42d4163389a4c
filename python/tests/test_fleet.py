"""Fleets of captures: read_many, the Parquet dataset, and the DuckDB fleet queries of
docs/python.md checked against prof-analyze summary on the committed captures."""

import json
import os
import subprocess
import sys
from collections import defaultdict

import pandas as pd
import pytest

import fuselens
from conftest import HERE, REPO, committed_captures, data

# The fleet queries exactly as docs/python.md shows them (DATASET stands for the folder).
TOP_KERNELS = """
SELECT name, COUNT(*) AS instances, SUM(duration_ns) AS total_ns,
       COUNT(DISTINCT run) AS runs
FROM read_parquet('DATASET/kernels/**/*.parquet', hive_partitioning = true)
GROUP BY name
ORDER BY total_ns DESC, name
"""

STEP_SPREAD = """
SELECT host, COUNT(*) AS steps,
       quantile_cont(duration_ns, 0.5) AS median_ns,
       quantile_cont(duration_ns, 0.9) / quantile_cont(duration_ns, 0.5) AS p90_over_median,
       MIN(duration_ns) AS min_ns, MAX(duration_ns) AS max_ns
FROM read_parquet('DATASET/steps/**/*.parquet', hive_partitioning = true)
WHERE steady
GROUP BY host
ORDER BY host
"""


def summary_kernels(prof_analyze, path):
    out = subprocess.run([prof_analyze, "summary", path, "--window", "all", "--format", "json",
                          "--section", "kernels"], capture_output=True, text=True, check=False)
    if out.returncode == 1 and "never initialized CUDA" in out.stderr:
        return []
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["kernels"]


def test_read_many_keys_rows_by_run_host_process_and_rank():
    paths = [data("ddp_2rank.sqlite"), data("step_loop.sqlite"), data("step_loop.sqlite")]
    frame = fuselens.read_many(paths)
    assert list(frame.columns[:4]) == ["run", "host", "process", "rank"]
    assert list(frame["run"].unique()) == ["ddp_2rank", "step_loop", "step_loop-2"]
    with fuselens.open(paths[0]) as cap:
        procs = cap.processes()
        ranks = {int(p): int(r) for p, r in zip(procs["pid"], procs["rank"]) if r is not pd.NA}
        n = len(cap.kernels())
    ddp = frame[frame["run"] == "ddp_2rank"]
    assert len(ddp) == n and len(ranks) == 2
    # Every kernel of the two ranked processes carries its process's rank.
    assert {int(p): int(r) for p, r in zip(ddp["process"], ddp["rank"])} == ranks
    assert frame[frame["run"] == "step_loop"]["rank"].isna().all()


def test_parquet_export_answers_the_fleet_questions_as_prof_analyze_does(tmp_path, prof_analyze):
    duckdb = pytest.importorskip("duckdb", reason="duckdb not installed (python/requirements-test.txt)")
    pytest.importorskip("pyarrow", reason="pyarrow not installed")
    captures = committed_captures()
    out = tmp_path / "fleet"
    written = fuselens.to_parquet(captures, out, tables=["kernels", "steps"])
    assert written > len(captures)
    labels = fuselens.run_labels(captures)

    # Per capture and kernel name: DuckDB on the Parquet files = prof-analyze summary.
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT run, name, COUNT(*), SUM(duration_ns) FROM read_parquet('{out}/kernels/**/*.parquet',"
        " hive_partitioning = true) GROUP BY run, name").fetchall()
    parquet = {(run, name): (n, int(total)) for run, name, n, total in rows}
    expected, fleet = {}, defaultdict(lambda: [0, 0])
    for path, label in zip(captures, labels):
        for row in summary_kernels(prof_analyze, path):
            expected[(label, row["name"])] = (row["instances"], row["total_ns"])
            fleet[row["name"]][0] += row["instances"]
            fleet[row["name"]][1] += row["total_ns"]
    assert len(expected) > 100
    assert parquet == expected

    # The documented top-kernels query over the whole fleet: the same totals, in order.
    top = con.execute(TOP_KERNELS.replace("DATASET", str(out))).fetchall()
    assert {name: [n, int(total)] for name, n, total, _ in top} == {k: v for k, v in fleet.items()}
    totals = [int(t) for _, _, t, _ in top]
    assert totals == sorted(totals, reverse=True)

    # Step-time spread per host, steady steps only: the same numbers from the captures' steps.
    spread = con.execute(STEP_SPREAD.replace("DATASET", str(out))).fetchall()
    steps = fuselens.read_many(captures, table="steps")
    steady = steps[steps["steady"] == 1]
    assert [h for h, *_ in spread] == sorted(steady["host"].unique())
    for host, n, median, _, lo, hi in spread:
        mine = steady[steady["host"] == host]["duration_ns"].astype("int64")
        assert n == len(mine)
        assert median == pytest.approx(float(mine.median()))
        assert (lo, hi) == (mine.min(), mine.max())


def test_dataset_layout_partition_columns_and_types(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed")
    out = tmp_path / "ds"
    fuselens.to_parquet([data("ddp_2rank.sqlite"), data("fusion_bench_schema_v1.sqlite")], out,
                        tables=["kernels", "processes"])
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))
    with fuselens.open(data("ddp_2rank.sqlite")) as cap:
        pids = sorted({int(p) for p in cap.kernels()["pid"]})  # a process without kernels has no file
        assert len(pids) == 2
        host = cap.run["host_name"]
    for pid in pids:
        assert f"kernels/run=ddp_2rank/host={host}/process={pid}/part-0.parquet" in files
    table = pq.read_table(next(out.rglob("run=fusion_bench_schema_v1/**/*.parquet")))
    assert "run" not in table.column_names and "rank" in table.column_names
    assert str(table.schema.field("start_ns").type) == "int64"
    # A dataset is written whole: a second export into the same folder is refused.
    with pytest.raises(fuselens.FuselensError, match="not empty"):
        fuselens.to_parquet([data("step_loop.sqlite")], out, tables=["kernels"])


def test_command_line_writes_the_dataset_and_reports_errors(tmp_path):
    pytest.importorskip("pyarrow", reason="pyarrow not installed")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
    ok = subprocess.run([sys.executable, "-m", "fuselens", "parquet", str(tmp_path / "o"),
                         data("step_loop.sqlite"), "--tables", "kernels,steps"],
                        capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "wrote 2 Parquet files" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "fuselens", "parquet", str(tmp_path / "p"),
                          str(tmp_path / "missing.sqlite")], capture_output=True, text=True,
                         env=env)
    assert bad.returncode == 1 and "no such file" in bad.stderr
    csv = subprocess.run([sys.executable, "-m", "fuselens", "table", data("step_loop.sqlite"),
                          "kernels"], capture_output=True, text=True, env=env)
    assert csv.returncode == 0
    lines = csv.stdout.splitlines()
    with fuselens.open(data("step_loop.sqlite")) as cap:
        n = len(cap.kernels())
    assert lines[0].startswith("id,pid,") and len(lines) == 1 + n


def test_pip_installs_the_package_with_its_schema(tmp_path):
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-build-isolation", "--target", str(target),
                           os.path.join(REPO, "python")], capture_output=True, text=True)
    if done.returncode != 0 and "setuptools" in done.stderr:
        pytest.skip("setuptools missing for a build without isolation")
    assert done.returncode == 0, done.stderr
    shipped = target / "fuselens" / "schema.sql"
    assert shipped.is_file() and not shipped.is_symlink()
    assert shipped.read_text() == open(os.path.join(REPO, "db", "schema.sql")).read()
    probe = subprocess.run(
        [sys.executable, "-c", "import fuselens, sys; c = fuselens.open(sys.argv[1]); "
                               "print(fuselens.__file__, len(c.kernels()))",
         data("step_loop.sqlite")],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(target)))
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith(str(target))


def test_the_spark_query_of_the_docs_when_pyspark_and_java_are_there(tmp_path):
    # Optional (docs/python.md, "Spark"): pyspark and a Java runtime are not installed by
    # scripts/setup.sh, so this skips on the test machines.
    pytest.importorskip("pyspark", reason="pyspark not installed (optional: pip install pyspark)")
    import shutil
    if not shutil.which("java"):
        pytest.skip("pyspark needs a Java runtime; none on PATH")
    from pyspark.sql import SparkSession
    out = tmp_path / "fleet"
    fuselens.to_parquet([data("step_loop.sqlite"), data("ddp_2rank.sqlite")], out,
                        tables=["kernels"])
    spark = SparkSession.builder.master("local[1]").getOrCreate()
    try:
        spark.read.parquet(str(out / "kernels")).createOrReplaceTempView("kernels")
        rows = spark.sql("SELECT name, COUNT(*) AS instances, SUM(duration_ns) AS total_ns "
                         "FROM kernels GROUP BY name").collect()
    finally:
        spark.stop()
    frame = fuselens.read_many([data("step_loop.sqlite"), data("ddp_2rank.sqlite")])
    mine = frame.groupby("name")["duration_ns"].agg(["count", "sum"])
    assert {r["name"]: (r["instances"], r["total_ns"]) for r in rows} == \
        {n: (int(c), int(s)) for n, (c, s) in zip(mine.index, mine.values)}
