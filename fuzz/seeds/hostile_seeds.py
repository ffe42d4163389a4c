#!/usr/bin/env python3
"""Writes the hostile captures of issue 22 into a fuzz corpus folder (scripts/fuzz.sh runs it).

Usage: hostile_seeds.py DATA_DIR OUT_DIR. Each seed is a small committed capture with one recipe of
the hostile-input probe applied, so that the fuzzer starts next to each guard (the timestamp,
size, schema and depth checks) and mutates around it.
"""
import os
import shutil
import sqlite3
import sys

data, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

RECIPES = {
    # calling-context cycles: a node its own parent; a two-node cycle
    "cct-self-parent": ("cct_paths.sqlite",
                        "UPDATE cct_node SET parent_id = id WHERE id = "
                        "(SELECT MAX(cct_node_id) FROM api_context)"),
    "cct-two-node-cycle": ("cct_paths.sqlite",
                           "UPDATE cct_node SET parent_id = (SELECT MAX(cct_node_id) FROM api_context) "
                           "WHERE id = (SELECT parent_id FROM cct_node WHERE id = "
                           "(SELECT MAX(cct_node_id) FROM api_context))"),
    # a call chain 5,000 frames deep (past the 4,096 bound)
    "cct-deep-chain": ("cct_paths.sqlite",
                       "CREATE TEMP TABLE leaf AS SELECT pid, (SELECT MAX(id) FROM cct_node) AS top, "
                       "(SELECT frame_id FROM cct_node WHERE frame_id IS NOT NULL LIMIT 1) AS frame, "
                       "(SELECT id FROM cct_node c WHERE parent_id IS NULL AND c.pid = a.pid) AS root "
                       "FROM api_context a LIMIT 1;"
                       "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) "
                       "INSERT INTO cct_node SELECT top + i, pid, CASE i WHEN 1 THEN root ELSE top + i - 1 "
                       "END, frame FROM n, leaf;"
                       "UPDATE api_context SET cct_node_id = (SELECT top + 5000 FROM leaf)"),
    # times: NULL, TEXT, at and past the bounds
    "time-null": ("cct_paths.sqlite",
                  "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, "
                  "'end_ns                INTEGER NOT NULL', 'end_ns ANY') WHERE name = 'kernel'; "
                  "PRAGMA writable_schema = OFF",
                  "UPDATE kernel SET end_ns = NULL WHERE id = 4"),
    "time-text": ("cct_paths.sqlite", "UPDATE kernel SET start_ns = 'soon' WHERE id = 1"),
    "time-near-bound": ("cct_paths.sqlite",
                       "UPDATE kernel SET end_ns = 4611686018427387903 WHERE id = 2;"
                       "UPDATE kernel SET start_ns = 4611686018427387000, "
                       "end_ns = 4611686018427387903 WHERE id = 3"),
    # memory sizes
    "size-int64-max": ("cct_paths.sqlite",
                       "UPDATE memcpy SET bytes = 9223372036854775807 WHERE rowid IN "
                       "(SELECT rowid FROM memcpy LIMIT 1)"),
    "size-negative": ("cct_paths.sqlite",
                      "UPDATE memcpy SET bytes = -5 WHERE rowid IN (SELECT rowid FROM memcpy LIMIT 1)"),
    "size-near-bound": ("cct_paths.sqlite", "UPDATE memcpy SET bytes = 1125899906842623"),
    # schema: a view in place of a table, two run rows, a trigger
    "view-kernel": ("cct_paths.sqlite",
                    "ALTER TABLE kernel RENAME TO kernel_rows; "
                    "CREATE VIEW kernel AS SELECT * FROM kernel_rows"),
    "two-runs": ("cct_paths.sqlite",
                 "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, "
                 "'CHECK (id = 1)', '') WHERE name = 'run'; PRAGMA writable_schema = OFF;",
                 "INSERT INTO run (id, command_line, working_directory, host_name, fuselens_version, "
                 "trace, start_utc_ns) SELECT 2, command_line, working_directory, host_name, "
                 "fuselens_version, trace, start_utc_ns FROM run"),
    # strings: control characters, a formula, a 70 KB name (past the 64 KiB bound)
    "strings-hostile": ("cct_paths.sqlite",
                        "UPDATE strings SET value = CAST(X'1B5D303B7077660A07' AS TEXT) || '=1+1' || id"),
    "strings-long": ("cct_paths.sqlite",
                     "UPDATE strings SET value = value || printf('%.*c', 70000, 'x') WHERE id = "
                     "(SELECT demangled_name_id FROM kernel LIMIT 1)"),
    # a JSON command line the old hand-written reader failed on
    "command-line-json": ("cct_paths.sqlite",
                          "UPDATE run SET command_line = '[\"a\\uZZZZ\", \"caf\\u00e9\", 3, null]'"),
}

for name, (source, *steps) in RECIPES.items():
    path = os.path.join(out, f"hostile-{name}.sqlite")
    for suffix in ("", "-journal", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    shutil.copyfile(os.path.join(data, source), path)
    for sql in steps:  # each on a connection of its own (a rewritten schema takes effect on reopening)
        db = sqlite3.connect(path)
        db.executescript(sql)
        db.commit()
        db.close()

# A capture in WAL mode (the header says so; no -wal beside it).
path = os.path.join(out, "hostile-wal-mode.sqlite")
shutil.copyfile(os.path.join(data, "cct_paths.sqlite"), path)
db = sqlite3.connect(path)
db.execute("PRAGMA journal_mode = WAL")
db.close()
print(f"[fuzz] {len(RECIPES) + 1} hostile seeds in {out}")
