"""The analyses, through prof-analyze's JSON (this package computes none of them itself)."""

import json
import os
import shutil
import subprocess

# The prof-analyze commands that write JSON for one capture (`--format json`).
JSON_COMMANDS = ("summary", "cct", "flags", "compare", "roofline", "steps", "modules", "ranks")

# prof-analyze's exit statuses (prof-analyze --help).
_EXIT = {1: "the capture cannot be read or holds nothing to analyze",
         2: "command-line error",
         3: "a CI gate was triggered",
         4: "the window selects nothing"}


def find_prof_analyze(explicit=None):
    """The prof-analyze executable: `explicit`, else $FUSELENS_PROF_ANALYZE, else on PATH."""
    from ._capture import FuselensError
    candidate = explicit or os.environ.get("FUSELENS_PROF_ANALYZE") or shutil.which("prof-analyze")
    if not candidate:
        raise FuselensError("prof-analyze not found: put it on PATH or set FUSELENS_PROF_ANALYZE")
    if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise FuselensError(f"prof-analyze '{candidate}' is not an executable file")
    return candidate


def _flags(options):
    flags = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            flags += [flag, ",".join(str(v) for v in value)]
        else:
            flags += [flag, str(value)]
    return flags


def run_json(capture, command, args, options, timeout=None):
    from ._capture import FuselensError
    if command not in JSON_COMMANDS:
        raise FuselensError(
            f"prof-analyze {command} has no JSON output here; one of: {', '.join(JSON_COMMANDS)}")
    exe = find_prof_analyze(capture.prof_analyze)
    argv = [exe, command, capture.path, "--format", "json"] + _flags(options) + list(args)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise FuselensError(f"prof-analyze {command} '{capture.path}' failed: {e}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        why = lines[-1] if lines else _EXIT.get(done.returncode, "no message")
        error = FuselensError(f"prof-analyze {command} exited {done.returncode}: {why}")
        error.returncode = done.returncode
        raise error
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise FuselensError(f"prof-analyze {command} wrote no JSON ({e})") from None


def tables(report):
    """`report` with each list of objects turned into a DataFrame (other values kept)."""
    import pandas as pd
    out = {}
    for key, value in report.items():
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            out[key] = pd.DataFrame(value)
        else:
            out[key] = value
    return out
