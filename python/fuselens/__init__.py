"""FuseLens captures in pandas, Arrow, DuckDB and Spark (docs/python.md).

    import fuselens
    with fuselens.open("run.sqlite") as cap:
        cap.kernels()            # DataFrame: name, duration_ns, ... (names resolved)
        cap.summary(window="all")["kernels"]   # prof-analyze summary, through its JSON
    fuselens.read_many(paths)    # kernels of many captures, with run/host/process/rank
    fuselens.to_parquet(paths, "fleet")    # Parquet dataset partitioned run=/host=/process=
"""

from ._analyze import JSON_COMMANDS, find_prof_analyze
from ._capture import TABLES, Capture, FuselensError
from ._fleet import FLEET_TABLES, read_many, run_labels, to_parquet
from ._schema import SCHEMA_VERSION

__version__ = "0.1.0"

__all__ = ["Capture", "FuselensError", "open", "read_many", "to_parquet", "run_labels", "TABLES",
           "FLEET_TABLES", "JSON_COMMANDS", "SCHEMA_VERSION", "find_prof_analyze"]


def open(path, prof_analyze=None):  # noqa: A001 - fuselens.open(path) reads as intended
    """Opens the capture at `path` read-only: a Capture (see its methods)."""
    return Capture(path, prof_analyze=prof_analyze)
