"""Hostile files: one clear FuselensError, never a crash, never a write to the file."""

import shutil
import sqlite3

import pandas as pd
import pytest

import fuselens
from conftest import data


def damaged(tmp_path, sql, name="c.sqlite", source="step_loop.sqlite"):
    path = tmp_path / name
    shutil.copy(data(source), path)
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.commit()
    db.close()
    return path


def refused(path, message):
    with pytest.raises(fuselens.FuselensError) as e:
        with fuselens.open(path) as cap:
            for name in fuselens.TABLES:
                cap.table(name)
    assert message in str(e.value), str(e.value)


def test_missing_empty_and_foreign_files(tmp_path):
    refused(tmp_path / "none.sqlite", "no such file")
    refused(tmp_path, "not a regular file")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    refused(tmp_path / "empty.sqlite", "is empty")
    (tmp_path / "text.sqlite").write_text("hello " * 100)
    refused(tmp_path / "text.sqlite", "not an SQLite database")
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t(a)").connection.close()
    refused(other, "application id 0")


def test_newer_schema_views_triggers_and_run_rows(tmp_path):
    refused(damaged(tmp_path, "PRAGMA user_version = 99", "v.sqlite"), "schema version 99")
    refused(damaged(tmp_path, "PRAGMA user_version = 0", "v0.sqlite"), "no FuseLens schema")
    refused(damaged(tmp_path, "ALTER TABLE kernel RENAME TO k; CREATE VIEW kernel AS "
                              "SELECT * FROM k", "view.sqlite"), "holds a view 'kernel'")
    refused(damaged(tmp_path, "CREATE TRIGGER t AFTER INSERT ON run BEGIN SELECT 1; END",
                    "trig.sqlite"), "holds a trigger 't'")
    refused(damaged(tmp_path, "DELETE FROM run", "norun.sqlite"), "0 run records")


def test_a_hostile_definition_of_a_schema_view_is_not_used(tmp_path):
    # The capture's own kernel_v says every kernel is 'evil'; the package's TEMP view wins.
    path = damaged(tmp_path, "CREATE VIEW kernel_v AS SELECT 1 AS id, 'evil' AS name")
    with fuselens.open(path) as cap:
        names = set(cap.kernels()["name"])
    assert "evil" not in names and len(names) > 1


def test_wrong_types_and_dangling_ids_are_reported_or_null(tmp_path):
    path = damaged(tmp_path, "UPDATE kernel SET start_ns = 'soon' WHERE id = 3")
    with pytest.raises(fuselens.FuselensError) as e:
        with fuselens.open(path) as cap:
            cap.kernels()
    assert "start_ns" in str(e.value) and "'soon'" in str(e.value)
    path = damaged(tmp_path, "UPDATE kernel SET demangled_name_id = 999999 WHERE id = 2",
                   "dangling.sqlite")
    with fuselens.open(path) as cap:
        k = cap.kernels().set_index("id")
        assert pd.isna(k.loc[2, "name"])
        assert not pd.isna(k.loc[1, "name"])


def test_enumeration_values_without_names_read_unknown(tmp_path):
    path = damaged(tmp_path, "UPDATE memcpy SET copy_kind = 77", source="fusion_bench.sqlite")
    with fuselens.open(path) as cap:
        assert set(cap.copies()["name"]) == {"[CUDA memcpy Unknown]"}


def test_a_cycle_in_the_calling_context_tree_ends(tmp_path):
    path = damaged(tmp_path, "UPDATE cct_node SET parent_id = id WHERE id = (SELECT MAX(id) "
                             "FROM cct_node); UPDATE cct_node SET parent_id = 5 WHERE id = 4",
                   source="cct_paths.sqlite")
    with fuselens.open(path) as cap:
        nodes = cap.cct_paths()
        total = len(cap.sql("SELECT id FROM cct_node"))
        assert 0 < len(nodes) < total  # the nodes caught in cycles are left out
