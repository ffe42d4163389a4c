"""Many captures: one DataFrame with run, host, process and rank columns, and a Parquet dataset
partitioned by run, host and process (Hive layout) for DuckDB, Spark, Polars or pyarrow."""

import os
import re

from ._capture import TABLES, Capture, FuselensError
from ._schema import reference

# The tables written by to_parquet unless told otherwise.
FLEET_TABLES = ("kernels", "copies", "memsets", "memory_events", "api_calls", "nvtx_ranges",
                "syncs", "steps", "processes")

KEY_COLUMNS = ("run", "host", "process", "rank")


def run_labels(paths):
    """A label per capture: the file name without its extension, with characters other than
    letters, digits, '.', '-' and '_' replaced by '_' (safe in a partition directory's name);
    a label seen before gets '-2', '-3', ..."""
    labels, seen = [], {}
    for path in paths:
        base = os.path.basename(os.fspath(path))
        stem = base[:-len(".sqlite")] if base.endswith(".sqlite") else os.path.splitext(base)[0]
        label = _safe(stem) or "capture"
        n = seen.get(label, 0) + 1
        seen[label] = n
        labels.append(label if n == 1 else f"{label}-{n}")
    return labels


def _safe(text):
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(text))


def _keyed(capture, label, name):
    """table `name` of `capture` with the run, host, process and rank columns first."""
    import pandas as pd
    frame = capture.table(name)
    procs = capture.table("processes")[["pid", "host_name", "rank"]]
    procs = procs.drop_duplicates("pid")
    run_host = capture.run.get("host_name") or ""
    if "pid" in frame.columns and name != "processes":
        keyed = frame.merge(procs, on="pid", how="left", sort=False)
        host = keyed.pop("host_name").fillna(run_host) if len(keyed) else keyed.pop("host_name")
        rank = keyed.pop("rank")
        process = keyed["pid"]
        frame = keyed
    elif name == "processes":
        host = frame["host_name"].fillna(run_host)
        rank = frame.pop("rank")
        process = frame["pid"]
    else:
        host = pd.Series([run_host] * len(frame), dtype=object)
        rank = pd.array([None] * len(frame), dtype="Int64")
        process = pd.array([None] * len(frame), dtype="Int64")
    keys = pd.DataFrame({
        "run": pd.array([label] * len(frame), dtype=object),
        "host": pd.array(list(host), dtype=object),
        "process": pd.array(list(process), dtype="Int64"),
        "rank": pd.array(list(rank), dtype="Int64"),
    })
    frame = frame.reset_index(drop=True)
    return pd.concat([keys, frame], axis=1)


def read_many(paths, table="kernels", labels=None, prof_analyze=None):
    """One DataFrame of `table` (a name of TABLES) over the captures at `paths`, with columns
    run (labels[i], default run_labels(paths)), host (the process's host: process_rank, merge,
    else the run's), process (pid) and rank (<NA> without a launcher's rank) first.
    Raises FuselensError naming the capture that cannot be read."""
    import pandas as pd
    paths = [os.fspath(p) for p in paths]
    labels = list(labels) if labels is not None else run_labels(paths)
    if len(labels) != len(paths):
        raise FuselensError(f"{len(labels)} labels for {len(paths)} captures")
    if table not in TABLES:
        raise FuselensError(f"unknown table '{table}'; one of: {', '.join(TABLES)}")
    frames = []
    for path, label in zip(paths, labels):
        with Capture(path, prof_analyze=prof_analyze) as capture:
            frames.append(_keyed(capture, label, table))
    if not frames:
        columns = list(KEY_COLUMNS) + [c for c, _ in reference().columns[TABLES[table]]]
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)


def to_parquet(paths, out_dir, tables=FLEET_TABLES, labels=None):
    """Writes the captures at `paths` as a Parquet dataset: for each table,
    OUT_DIR/TABLE/run=RUN/host=HOST/process=PID/part-0.parquet (Hive partitioning: the run, host
    and process columns are in the directory names, not in the files; rank is in the files).
    Host names are made safe as run labels are. Columns have the view's types (int64, float64,
    string), the same in every file. A table with no rows in a process writes no file.
    Returns the number of files written. Needs pyarrow. Refuses an OUT_DIR/TABLE that exists and
    is not empty (a dataset is written whole, not merged into an older one)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise FuselensError("writing Parquet needs pyarrow: pip install pyarrow") from None
    from ._frames import arrow_type
    paths = [os.fspath(p) for p in paths]
    labels = list(labels) if labels is not None else run_labels(paths)
    if len(labels) != len(paths):
        raise FuselensError(f"{len(labels)} labels for {len(paths)} captures")
    unknown = [t for t in tables if t not in TABLES]
    if unknown:
        raise FuselensError(f"unknown table '{unknown[0]}'; one of: {', '.join(TABLES)}")
    for table in tables:
        target = os.path.join(out_dir, table)
        if os.path.isdir(target) and os.listdir(target):
            raise FuselensError(f"'{target}' exists and is not empty: write to a new folder")
    written = 0
    for path, label in zip(paths, labels):
        with Capture(path) as capture:
            for table in tables:
                columns = [(c, k) for c, k in reference().columns[TABLES[table]] if c != "rank"]
                schema = pa.schema([pa.field("rank", pa.int64())] +
                                   [pa.field(c, arrow_type(k)) for c, k in columns])
                frame = _keyed(capture, label, table)
                if not len(frame):
                    continue
                frame["host"] = frame["host"].map(lambda h: _safe(h) or "unknown")
                frame["process"] = frame["process"].fillna(-1)
                for (host, process), part in frame.groupby(["host", "process"], sort=True):
                    folder = os.path.join(out_dir, table, f"run={_safe(label)}",
                                          f"host={host}", f"process={int(process)}")
                    os.makedirs(folder, exist_ok=True)
                    body = part.drop(columns=["run", "host", "process"])
                    try:
                        arrays = [pa.array(body[f.name].to_numpy(dtype=object, na_value=None),
                                           type=f.type) for f in schema]
                    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                        raise FuselensError(f"'{path}': {table}: {e}") from None
                    pq.write_table(pa.Table.from_arrays(arrays, schema=schema),
                                   os.path.join(folder, "part-0.parquet"))
                    written += 1
    return written
