"""Capture: one FuseLens capture (an SQLite file written by prof-run), opened read-only.

Every table comes through the schema's views (db/schema.sql, "Views"; docs/python.md), created
TEMP on this package's own connection, so that names are resolved and durations computed the
same way for a capture of any schema version (1 to 9), with or without the views stored in it,
and the file is never written: it is opened read-only (immutable when it is in WAL mode with no
-wal and -shm beside it, so that reading creates neither, as db::Reader does).
"""

import os
import pathlib
import sqlite3
import urllib.parse

from . import _frames
from ._schema import APPLICATION_ID, SCHEMA_VERSION, reference, temp_statements


class FuselensError(Exception):
    """A capture that cannot be read, or an analysis that failed: one line saying why."""


# What each DataFrame holds: method name -> the schema's view.
TABLES = {
    "kernels": "kernel_v",
    "copies": "memcpy_v",
    "memsets": "memset_v",
    "memory_events": "memory_event_v",
    "api_calls": "api_call_v",
    "nvtx_ranges": "nvtx_range_v",
    "nvtx_marks": "nvtx_mark_v",
    "syncs": "sync_event_v",
    "steps": "step_v",
    "processes": "process_v",
    "frames": "frame_v",
    "cct_paths": "cct_path_v",
    "call_paths": "api_context_v",
}


def _uri(path, immutable):
    quoted = urllib.parse.quote(str(pathlib.Path(path).resolve()))
    return f"file:{quoted}?{'immutable=1' if immutable else 'mode=ro'}"


def _open(path):
    """A read-only connection to the capture at `path`, checked as db::Reader checks it (file,
    application id, schema version, run row, no object FuseLens never writes)."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError:
        raise FuselensError(f"'{p}': no such file") from None
    if not os.path.isfile(p):
        raise FuselensError(f"'{p}' is not a regular file")
    if st.st_size == 0:
        raise FuselensError(f"'{p}' is empty, not a FuseLens capture")
    try:
        with open(p, "rb") as f:
            header = f.read(100)
    except OSError as e:
        raise FuselensError(f"'{p}' cannot be read: {e.strerror}") from None
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        raise FuselensError(f"'{p}' is not a FuseLens capture (not an SQLite database)")
    wal = header[18] == 2 and header[19] == 2
    immutable = wal and not os.path.lexists(p + "-wal") and not os.path.lexists(p + "-shm")
    try:
        db = sqlite3.connect(_uri(p, immutable), uri=True, check_same_thread=False)
    except sqlite3.Error as e:
        raise FuselensError(f"'{p}' cannot be opened: {e}") from None
    try:
        _check(db, p)
    except sqlite3.Error as e:
        db.close()
        raise FuselensError(f"'{p}' is not a FuseLens capture (corrupt: {e})") from None
    except FuselensError:
        db.close()
        raise
    return db


def _check(db, p):
    app = db.execute("PRAGMA application_id").fetchone()[0]
    if app != APPLICATION_ID:
        raise FuselensError(f"'{p}' is not a FuseLens capture (SQLite application id {app})")
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise FuselensError(
            f"'{p}' was written with capture schema version {version}; this package reads up "
            f"to version {SCHEMA_VERSION}: upgrade FuseLens")
    if version < 1:
        raise FuselensError(f"'{p}' has no FuseLens schema version")
    lean = db.execute(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kernel_lean')"
        " AND NOT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kernel')"
    ).fetchone()[0]
    if lean:
        raise FuselensError(
            f"'{p}' is a lean capture (prof-run --layout lean), which this package does not read "
            "yet: prof-analyze reads it, or record without --layout lean")
    views = reference().views
    for kind, name in db.execute(
            "SELECT type, name FROM sqlite_master WHERE type NOT IN ('table', 'index')"):
        if kind == "view" and name in views:
            continue
        raise FuselensError(
            f"'{p}' holds a {kind} '{name}', which FuseLens never writes: the capture is "
            "damaged or was not written by FuseLens")
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "run" not in tables:
        raise FuselensError(f"'{p}' has no run table: the capture is incomplete")
    runs = db.execute("SELECT COUNT(*) FROM run").fetchone()[0]
    if runs != 1:
        raise FuselensError(f"'{p}' has {runs} run records where a capture has one")


class Capture:
    """One capture, opened read-only. Use as a context manager or call close().

    path: the capture file. prof_analyze: the prof-analyze executable for the analyses
    (default: $FUSELENS_PROF_ANALYZE, else prof-analyze on PATH).
    Raises FuselensError when the file is not a readable FuseLens capture."""

    def __init__(self, path, prof_analyze=None):
        self.path = os.fspath(path)
        self.prof_analyze = prof_analyze
        self._db = _open(self.path)
        try:
            self._db.execute("PRAGMA trusted_schema = OFF")
            present = self.tables()
            for sql, args in temp_statements(present):
                self._db.execute(sql, args)
            self._db.commit()
            self._db.execute("PRAGMA query_only = ON")
            self.schema_version = self._db.execute("PRAGMA main.user_version").fetchone()[0]
            cur = self._db.execute("SELECT * FROM run WHERE id = 1")
            row = cur.fetchone()
            self.run = dict(zip([d[0] for d in cur.description], row)) if row else {}
        except sqlite3.Error as e:
            self._db.close()
            raise FuselensError(f"'{self.path}' cannot be read: {e}") from None

    def tables(self):
        """The names of the tables stored in the capture (older schema versions have fewer)."""
        return {r[0] for r in self._db.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table'")}

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Capture({self.path!r}, schema version {self.schema_version})"

    # --- rows -------------------------------------------------------------------------------

    def sql(self, query, params=()):
        """The rows of an SQL query as a DataFrame (the views are available; the file is
        read-only). Integer columns are pandas' nullable Int64 (exact, NULL as <NA>)."""
        try:
            cur = self._db.execute(query, params)
            return _frames.to_frame(cur.description, cur.fetchall(), None)
        except sqlite3.Error as e:
            raise FuselensError(f"'{self.path}': {e}") from None

    def table(self, name):
        """The rows of one of TABLES (e.g. 'kernels') or of a view (e.g. 'kernel_v') as a
        DataFrame, typed by the view's columns: integers Int64, text object, reals float64."""
        view = TABLES.get(name, name)
        columns = reference().columns.get(view)
        if columns is None:
            raise FuselensError(f"unknown table '{name}'; one of: {', '.join(TABLES)}")
        if view == "api_context_v":
            return self.call_paths()
        try:
            cur = self._db.execute(f'SELECT * FROM "{view}"')
            return _frames.to_frame(cur.description, cur.fetchall(), dict(columns),
                                    where=f"'{self.path}', {view}")
        except sqlite3.Error as e:
            raise FuselensError(f"'{self.path}': {view}: {e}") from None

    def arrow(self, name):
        """table(name) as a pyarrow.Table with the view's column types (needs pyarrow)."""
        view = TABLES.get(name, name)
        return _frames.to_arrow(self.table(name), dict(reference().columns[view]))

    def kernels(self):
        """Kernels: times, duration_ns, name (demangled), short and mangled names, launch shape."""
        return self.table("kernels")

    def copies(self):
        """Memory copies: name '[CUDA memcpy KIND]', copy/source/destination kinds, bytes."""
        return self.table("copies")

    def memsets(self):
        return self.table("memsets")

    def memory_events(self):
        """Allocations and releases: operation, memory kind, address, bytes."""
        return self.table("memory_events")

    def api_calls(self):
        """CUDA runtime and driver calls: domain, name, times, duration_ns, correlation id."""
        return self.table("api_calls")

    def nvtx_ranges(self):
        """NVTX ranges: domain, name (the range text), duration_ns (<NA> when never ended)."""
        return self.table("nvtx_ranges")

    def nvtx_marks(self):
        return self.table("nvtx_marks")

    def syncs(self):
        return self.table("syncs")

    def steps(self):
        """The steps stored at the end of the run (schema 6 on; empty before, or run
        analyze('steps') to find them), with duration_ns and steady."""
        return self.table("steps")

    def processes(self):
        """Processes with host_name and rank (NULL without a launcher's rank)."""
        return self.table("processes")

    def frames(self):
        return self.table("frames")

    def cct_paths(self):
        """Every calling-context node with its frame label and its path from the root."""
        return self.table("cct_paths")

    def call_paths(self):
        """The calling context of each traced API call (pid, correlation_id): node, label, path.
        Merge with kernels() on ['pid', 'correlation_id'] for each kernel's launch path.
        The api_context_v view's rows, joined here in pandas so that calls of one node share
        one path string (paths of PyTorch stacks are kilobytes)."""
        calls = self.sql("SELECT pid, correlation_id, tid, cct_node_id FROM api_context")
        calls = calls.astype({c: "Int64" for c in calls.columns})
        nodes = self.cct_paths()[["id", "depth", "site", "path"]].rename(columns={"id": "cct_node_id"})
        nodes = nodes.drop_duplicates("cct_node_id")
        out = calls.merge(nodes, on="cct_node_id", how="left", sort=False)
        return out[[c for c, _ in reference().columns["api_context_v"]]]

    # --- analyses ---------------------------------------------------------------------------

    def analyze(self, command, *args, **options):
        """Runs `prof-analyze COMMAND FILE --format json` and returns its JSON (a dict).

        options become flags: window='all' -> --window all, auto_steps=True -> --auto-steps,
        section=['kernels', 'api'] -> --section kernels,api; args are passed as they are.
        The analyses are prof-analyze's own (docs/): this package does not copy them."""
        from . import _analyze
        return _analyze.run_json(self, command, list(args), options)

    def summary(self, **options):
        """prof-analyze summary as a dict whose table sections (kernels, memory_operations, api,
        nvtx, device_memory, processes, devices) are DataFrames. Note: like the command, the
        default window is the steady steps; pass window='all' for the whole capture."""
        from . import _analyze
        return _analyze.tables(self.analyze("summary", **options))
