"""The capture schema as the package knows it: db/schema.sql, shipped in the package.

`schema.sql` beside this file is the repository's db/schema.sql (a symbolic link in the source
tree, a copy in an installed package). It is run once into an in-memory database, and its
sqlite_master gives the tables (to stand in, empty, for the tables an older capture lacks), the
enumeration rows and the views (created TEMP on each capture's own connection).
"""

import functools
import importlib.resources
import sqlite3

APPLICATION_ID = 0x46534C4E  # "FSLN": PRAGMA application_id of every capture
SCHEMA_VERSION = 10  # the newest schema this package reads (db/include/fuselens/db/Records.h)


@functools.lru_cache(maxsize=1)
def schema_sql():
    """The text of db/schema.sql as shipped in the package."""
    return importlib.resources.files("fuselens").joinpath("schema.sql").read_text("utf-8")


class _Reference:
    """The schema run into an in-memory database: its tables, enumeration rows and views."""

    def __init__(self):
        db = sqlite3.connect(":memory:")
        try:
            db.executescript(schema_sql())
            master = db.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view') "
                "ORDER BY rowid").fetchall()
            self.tables = {name: sql for kind, name, sql in master if kind == "table"}
            self.views = {name: sql for kind, name, sql in master if kind == "view"}
            self.rows = {}
            for name in self.tables:
                rows = db.execute(f'SELECT * FROM "{name}"').fetchall()
                if rows:
                    self.rows[name] = rows
            self.columns = {}
            for name in self.views:
                info = db.execute(f'PRAGMA table_info("{name}")').fetchall()
                self.columns[name] = [(row[1], _kind(row[1], row[2])) for row in info]
        finally:
            db.close()


def _kind(column, declared):
    """'int', 'float' or 'str': how a view's column is typed in DataFrames and Parquet files.

    The declared type of the table column it reads; for a computed column (no declared type),
    int for times (*_ns), depths and flags, str otherwise (names, labels, paths)."""
    declared = (declared or "").upper()
    if "INT" in declared:
        return "int"
    if declared in ("REAL", "NUMERIC", "FLOAT", "DOUBLE"):
        return "float"
    if declared == "TEXT":
        return "str"
    if column.endswith("_ns") or column in ("depth", "steady"):
        return "int"
    return "str"


@functools.lru_cache(maxsize=1)
def reference():
    return _Reference()


def temp_statements(present_tables):
    """The statements that make a capture readable through the views on a connection: a TEMP
    table for each table of the schema the capture lacks (with the enumeration rows), then each
    view as a TEMP view. `present_tables` are the names of the capture's tables."""
    ref = reference()
    statements = []
    for name, sql in ref.tables.items():
        if name in present_tables:
            continue
        statements.append((sql.replace("CREATE TABLE ", "CREATE TEMP TABLE ", 1), ()))
        for row in ref.rows.get(name, ()):
            marks = ", ".join("?" * len(row))
            statements.append((f'INSERT INTO temp."{name}" VALUES ({marks})', row))
    for sql in ref.views.values():
        statements.append((sql.replace("CREATE VIEW ", "CREATE TEMP VIEW ", 1), ()))
    return statements


def _literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def temp_script(present_tables=None):
    """temp_statements as one SQL script (values inlined), for the sqlite3 shell:
    `sqlite3 -readonly CAPTURE -cmd "$(python -m fuselens views CAPTURE)"`. Without
    `present_tables`, the views only (a capture written with them, or of schema version 9)."""
    if present_tables is None:
        present_tables = set(reference().tables)
    lines = []
    for sql, args in temp_statements(present_tables):
        for value in args:
            sql = sql.replace("?", _literal(value), 1)
        lines.append(sql.rstrip().rstrip(";") + ";")
    return "\n".join(lines) + "\n"
