"""The files of fleetsim output folders, read and checked for scripts/report.py: a malformed file is a
BadInput naming the file (and the line and column of the first bad value), never a Python traceback.

Checked: the file parses as CSV (or JSON); the columns the report uses are present; every value of a
numeric column is a number or empty (a repeated header line or text in a numeric column is named).
"""
import json
import os

import pandas as pd


class BadInput(Exception):
    pass


# The numeric columns the report reads, per file name; the first list must be present.
NUMERIC = {
    "jobs.csv": (["jct_s", "wait_s"], ["submit_s", "start_s", "end_s", "gpus", "nodes", "restarts", "preempted_s"]),
    "timeseries.csv": (["time_s", "busy_gpus", "running_jobs", "queued_jobs"], ["completed_jobs"]),
    "requests.csv": (["ttft_s", "tpot_s", "e2e_s"],
                     ["arrival_s", "first_token_s", "end_s", "input_tokens", "output_tokens"]),
    "failures.csv": (["time_s", "nodes"], ["jobs_hit", "gpu_hours_lost", "repaired_s"]),
    "aggregate.csv": (["n", "mean", "ci95"], ["std", "min", "max"]),
    "paired.csv": (["n", "mean_diff", "ci95_diff"], ["mean_rel_pct", "ci95_rel_pct"]),
    "runs.csv": ([], ["seed"]),
}
# Columns that must be present without being numbers.
TEXT = {"failures.csv": ["event"], "aggregate.csv": ["combination", "metric"], "runs.csv": ["run"],
        "paired.csv": ["key", "setting", "baseline", "metric"], "comparison.csv": ["policy", "placement"]}


def read_csv(path, numeric=None):
    """The CSV file at `path` with its numeric columns as numbers; BadInput naming the file otherwise.
    `numeric`: (required, optional) numeric columns, by default NUMERIC[the file's name]."""
    name = os.path.basename(path)
    required, optional = numeric if numeric is not None else NUMERIC.get(name, ([], []))
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError, UnicodeDecodeError) as e:  # pandas' ParserError and EmptyDataError too
        raise BadInput(f"{path}: not a readable CSV table: {str(e).strip()}") from e
    missing = [c for c in list(required) + TEXT.get(name, []) if c not in df.columns]
    if missing:
        raise BadInput(f"{path}: no column {', '.join(repr(c) for c in missing)} (header: {', '.join(df.columns)})")
    header = [str(c) for c in df.columns]
    for col in list(required) + [c for c in optional if c in df.columns]:
        if pd.api.types.is_numeric_dtype(df[col]):
            continue
        values = pd.to_numeric(df[col], errors="coerce")
        bad = values.isna() & df[col].notna() & (df[col].astype(str).str.strip() != "")
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            row = [str(v) for v in df.iloc[i].tolist()]
            line = i + 2  # the header is line 1
            what = ("repeats the header line (files written one after another?)" if row == header
                    else f"column '{col}': '{df[col].iloc[i]}' is not a number")
            raise BadInput(f"{path}:{line}: {what}")
        df[col] = values
    return df


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: not readable JSON: {e}") from e
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: expected a JSON object, got {type(doc).__name__}")
    return doc
