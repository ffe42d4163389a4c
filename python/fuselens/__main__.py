"""python -m fuselens: the package's command line.

    python -m fuselens parquet OUT_DIR CAPTURE... [--tables kernels,steps]
    python -m fuselens table CAPTURE TABLE
    python -m fuselens views [CAPTURE]

Exit status: 0 success, 1 a capture cannot be read or the output cannot be written, 2 usage.
"""

import argparse
import sys

from . import FLEET_TABLES, TABLES, Capture, FuselensError, to_parquet
from ._schema import temp_script


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m fuselens",
        description="FuseLens captures as tables: a Parquet dataset of many captures, one "
                    "table of one capture as CSV, or the SQL views for the sqlite3 shell "
                    "(docs/python.md).",
        epilog="examples:\n"
               "  python -m fuselens parquet fleet/ runs/*.sqlite\n"
               "  python -m fuselens table run.sqlite kernels > kernels.csv\n"
               "  sqlite3 -readonly run.sqlite -cmd \"$(python -m fuselens views run.sqlite)\"",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    pq = sub.add_parser("parquet", help="write a Parquet dataset partitioned run=/host=/process=")
    pq.add_argument("out_dir")
    pq.add_argument("captures", nargs="+")
    pq.add_argument("--tables", default=",".join(FLEET_TABLES),
                    help="comma separated, of: " + ", ".join(TABLES))
    tb = sub.add_parser("table", help="print one table of one capture as CSV")
    tb.add_argument("capture")
    tb.add_argument("table", choices=list(TABLES))
    vw = sub.add_parser("views", help="print the SQL that creates the views as TEMP views (for "
                                      "sqlite3 -readonly on a capture written without them)")
    vw.add_argument("capture", nargs="?",
                    help="add empty TEMP tables for the tables this capture lacks (older schema)")
    args = parser.parse_args(argv)
    try:
        if args.command == "parquet":
            tables = [t for t in args.tables.split(",") if t]
            n = to_parquet(args.captures, args.out_dir, tables=tables)
            print(f"wrote {n} Parquet files under {args.out_dir}")
        elif args.command == "views":
            present = None
            if args.capture:
                with Capture(args.capture) as cap:
                    present = cap.tables()
            sys.stdout.write(temp_script(present))
        else:
            with Capture(args.capture) as cap:
                cap.table(args.table).to_csv(sys.stdout, index=False)
    except FuselensError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
