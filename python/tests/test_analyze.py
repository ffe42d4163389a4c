"""The analyses come from prof-analyze's JSON; the DataFrames agree with them."""

import pytest

import fuselens
from conftest import data


def test_summary_kernels_equal_the_dataframe_aggregates(prof_analyze):
    with fuselens.open(data("train_steps.sqlite"), prof_analyze=prof_analyze) as cap:
        summary = cap.summary(window="all")
        mine = cap.kernels().groupby("name")["duration_ns"].agg(["count", "sum"])
    table = summary["kernels"].set_index("name")
    assert len(table) == len(mine) > 1
    for name, row in table.iterrows():
        assert int(row["instances"]) == int(mine.loc[name, "count"]), name
        assert int(row["total_ns"]) == int(mine.loc[name, "sum"]), name
    assert summary["window"]["spec"] == "all"


def test_options_become_flags_and_the_default_window_is_the_commands(prof_analyze):
    with fuselens.open(data("train_steps.sqlite"), prof_analyze=prof_analyze) as cap:
        steady = cap.analyze("summary", section=["kernels"])
        assert steady["window"]["spec"] == "steady"
        steps = cap.analyze("steps", window="all")
        assert len(steps["steps"]) == len(cap.steps())


def test_a_failing_analysis_raises_with_the_exit_status(prof_analyze):
    with fuselens.open(data("step_loop.sqlite"), prof_analyze=prof_analyze) as cap:
        with pytest.raises(fuselens.FuselensError) as e:
            cap.analyze("summary", window="steps:999")
        assert e.value.returncode == 4
        with pytest.raises(fuselens.FuselensError, match="no JSON output"):
            cap.analyze("merge")


def test_a_missing_prof_analyze_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("FUSELENS_PROF_ANALYZE", raising=False)
    with fuselens.open(data("step_loop.sqlite")) as cap:
        with pytest.raises(fuselens.FuselensError, match="prof-analyze not found"):
            cap.summary()
