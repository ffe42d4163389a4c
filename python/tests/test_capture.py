"""One capture as DataFrames: names resolved, durations exact, every schema version, read-only."""

import csv
import hashlib
import io
import os
import shutil
import sqlite3
import stat
import subprocess
import sys

import pandas as pd
import pytest

import fuselens
from conftest import REPO, committed_captures, data


def raw(path, sql):
    """Rows straight from the file with the joins written out, for comparison."""
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_kernels_have_names_joined_and_exact_durations():
    path = data("step_loop.sqlite")
    expected = raw(path, "SELECT k.id, s.value, k.end_ns - k.start_ns, k.start_ns FROM kernel k "
                         "JOIN strings s ON s.id = k.demangled_name_id ORDER BY k.id")
    with fuselens.open(path) as cap:
        k = cap.kernels().sort_values("id")
    assert len(k) == len(expected) > 0
    assert list(k["name"]) == [e[1] for e in expected]
    assert list(k["duration_ns"]) == [e[2] for e in expected]
    # Nanosecond timestamps (about 1.8e18) survive exactly: no float64 on the way.
    assert str(k["start_ns"].dtype) == "Int64"
    assert [int(v) for v in k["start_ns"]] == [e[3] for e in expected]


def test_every_table_reads_on_every_committed_capture():
    captures = committed_captures()
    assert len(captures) >= 20
    for path in captures:
        with fuselens.open(path) as cap:
            for name in fuselens.TABLES:
                frame = cap.table(name)
                assert list(frame.columns)  # typed columns even when empty
            n = raw(path, "SELECT COUNT(*) FROM kernel")[0][0]
            assert len(cap.kernels()) == n, path


def test_schema_version_1_capture_reads_with_empty_newer_tables():
    path = data("fusion_bench_schema_v1.sqlite")
    with fuselens.open(path) as cap:
        assert cap.schema_version == 1
        assert len(cap.kernels()) == raw(path, "SELECT COUNT(*) FROM kernel")[0][0]
        assert cap.steps().empty and cap.call_paths().empty
        assert list(cap.processes()["host_name"].unique()) == [cap.run["host_name"]]


def test_copies_memory_api_nvtx_and_names_of_enumerations():
    path = data("fusion_bench.sqlite")
    with fuselens.open(path) as cap:
        copies = cap.copies()
        kinds = dict(raw(path, "SELECT value, name FROM enum_memcpy_kind"))
        expected = sorted("[CUDA memcpy %s]" % kinds[k]
                          for (k,) in raw(path, "SELECT copy_kind FROM memcpy"))
        assert sorted(copies["name"]) == expected
        api = cap.api_calls()
        assert set(api["domain"]) <= {"CUDA runtime", "CUDA driver"}
        assert (api["duration_ns"] >= 0).all()
        ranges = cap.nvtx_ranges()
        names = raw(path, "SELECT s.value FROM nvtx_range r JOIN strings s ON s.id = r.text_id")
        assert sorted(ranges["name"]) == sorted(n for (n,) in names)
        events = cap.memory_events()
        assert set(events["operation"]) <= {"allocation", "release"}


def test_call_paths_end_at_the_launch_site():
    # workloads/cct_paths launches thread_kernel from thread_body on its own thread.
    path = data("cct_paths.sqlite")
    with fuselens.open(path) as cap:
        k = cap.kernels().merge(cap.call_paths(), on=["pid", "correlation_id"], how="left")
        thread = k[k["short_name"] == "thread_kernel"]
        assert len(thread) > 0
        assert all("thread_body" in p for p in thread["path"])
        # The launch site is the user's code, not the CUDA stack or the collector beneath it.
        assert all(s.startswith("__device_stub__") for s in thread["site"])
        assert not any("libcudart" in p or "Collector" in p for p in k["path"].dropna())
        nodes = cap.cct_paths()
        # A node's path is its parent's, then its own label unless the frame is internal.
        by_id = nodes.set_index("id")
        assert nodes["internal"].sum() > 0
        for _, row in nodes[nodes["depth"] > 1].iterrows():
            parent = by_id.loc[row["parent_id"]]
            if row["internal"]:
                assert row["path"] == parent["path"]
            else:
                assert row["path"] == (parent["path"] + " > " if parent["path"] else "") + row["label"]
        # call_paths() (merged in pandas) holds what the api_context_v view holds.
        view = cap.sql("SELECT * FROM api_context_v ORDER BY pid, correlation_id")
        mine = cap.call_paths().sort_values(["pid", "correlation_id"]).reset_index(drop=True)
        assert list(mine.columns) == list(view.columns)
        assert mine.astype(object).where(mine.notna(), None).values.tolist() == \
            view.astype(object).where(view.notna(), None).values.tolist()


def test_steps_processes_and_ranks():
    with fuselens.open(data("ddp_2rank.sqlite")) as cap:
        procs = cap.processes()
        ranks = raw(data("ddp_2rank.sqlite"), "SELECT pid, rank FROM process_rank")
        assert len(ranks) == 2
        assert set(ranks) <= {(int(p), int(r)) for p, r in zip(procs["pid"], procs["rank"])
                              if r is not pd.NA}
        steps = cap.steps()
        assert len(steps) == raw(data("ddp_2rank.sqlite"), "SELECT COUNT(*) FROM step")[0][0]
        assert (steps["duration_ns"] == steps["end_ns"] - steps["start_ns"]).all()
        first = raw(data("ddp_2rank.sqlite"), "SELECT steady_first FROM step_detection")[0][0]
        assert list(steps["steady"]) == [int(i >= first) for i in steps["id"]]


def test_the_file_is_never_modified_even_when_writable(tmp_path):
    path = tmp_path / "copy.sqlite"
    shutil.copy(data("train_steps.sqlite"), path)
    before = digest(path)
    with fuselens.open(path) as cap:
        cap.kernels()
        with pytest.raises(fuselens.FuselensError):
            cap.sql("DELETE FROM kernel")
    assert digest(path) == before
    assert sorted(os.listdir(tmp_path)) == ["copy.sqlite"]  # no -wal, -shm or journal left


def test_a_read_only_file_in_a_read_only_folder_reads(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "c.sqlite"
    shutil.copy(data("step_loop.sqlite"), path)
    os.chmod(path, stat.S_IRUSR)
    os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
    try:
        with fuselens.open(path) as cap:
            assert len(cap.kernels()) > 0
    finally:
        os.chmod(folder, stat.S_IRWXU)


def test_arrow_tables_have_the_view_types():
    pa = pytest.importorskip("pyarrow", reason="pyarrow not installed")
    with fuselens.open(data("step_loop.sqlite")) as cap:
        table = cap.arrow("kernels")
        assert table.schema.field("start_ns").type == pa.int64()
        assert table.schema.field("name").type == pa.string()
        assert table.num_rows == len(cap.kernels())


def test_sql_queries_see_the_views():
    with fuselens.open(data("step_loop.sqlite")) as cap:
        top = cap.sql("SELECT name, SUM(duration_ns) AS total_ns FROM kernel_v GROUP BY name "
                      "ORDER BY total_ns DESC LIMIT 1")
        assert len(top) == 1 and top["total_ns"].iloc[0] > 0


def test_the_sqlite3_shell_reads_an_old_capture_through_temp_views(tmp_path):
    shell = shutil.which("sqlite3")
    if not shell:
        pytest.skip("no sqlite3 shell")
    path = data("fusion_bench_schema_v1.sqlite")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = subprocess.run([sys.executable, "-m", "fuselens", "views", path],
                            capture_output=True, text=True, env=env, check=True).stdout
    before = digest(path)
    out = subprocess.run([shell, "-readonly", "-csv", path, "-cmd", script,
                          "SELECT name, COUNT(*), SUM(duration_ns) FROM kernel_v GROUP BY name "
                          "ORDER BY name; SELECT COUNT(*) FROM step_v;"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    with fuselens.open(path) as cap:
        k = cap.kernels().groupby("name")["duration_ns"].agg(["count", "sum"]).sort_index()
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[:-1] == [[n, str(c), str(s)] for n, (c, s) in zip(k.index, k.values)]
    assert rows[-1] == ["0"]
    assert digest(path) == before


def test_a_capture_written_with_the_views_reads_in_sqlite3_python_and_prof_analyze(
        tmp_path, prof_analyze):
    # What the writer makes from now on: the schema's views stored in the file.
    path = tmp_path / "with_views.sqlite"
    shutil.copy(data("step_loop.sqlite"), path)
    schema = open(os.path.join(REPO, "db", "schema.sql")).read()
    db = sqlite3.connect(path)
    db.executescript(schema)  # IF NOT EXISTS: adds the views (and later versions' tables)
    db.commit()
    stored = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
    plain = db.execute("SELECT name, SUM(duration_ns) FROM kernel_v GROUP BY name "
                       "ORDER BY name").fetchall()
    db.close()
    assert len(stored) == len(fuselens.TABLES)
    with fuselens.open(path) as cap:
        k = cap.kernels().groupby("name")["duration_ns"].sum().sort_index()
    assert [(n, int(s)) for n, s in k.items()] == plain
    out = subprocess.run([prof_analyze, "summary", str(path), "--window", "all"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
