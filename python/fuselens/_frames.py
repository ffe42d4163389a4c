"""Rows to DataFrames and Arrow tables with exact types.

SQLite integers are 64-bit; pandas would turn an integer column holding a NULL into float64 and
lose the low bits of nanosecond timestamps (about 256 ns at 1.8e18), so integer columns are built
as pandas' nullable Int64. A value of the wrong type in a column (a damaged or hostile capture)
is reported, not silently converted.
"""


def _pd():
    try:
        import pandas
    except ImportError:  # pragma: no cover - pandas is a dependency
        raise ImportError("fuselens needs pandas: pip install pandas") from None
    return pandas


def _column(pd, name, values, kind, where):
    import numpy as np

    from ._capture import FuselensError
    if kind in ("int", "float"):
        # Fast path: a column without NULLs that numpy reads as int64 (float64) is exact.
        try:
            fast = np.array(values)
        except (ValueError, OverflowError):
            fast = None
        if fast is not None and fast.ndim == 1:
            if kind == "int" and fast.dtype == np.int64:
                return pd.array(fast, dtype="Int64")
            if kind == "float" and fast.dtype in (np.int64, np.float64):
                return fast.astype(np.float64)
        ok = (int,) if kind == "int" else (int, float)
        bad = next((v for v in values if v is not None and type(v) not in ok), None)
        if bad is not None:
            raise FuselensError(
                f"{where}: column {name} holds {bad!r} where "
                f"{'an integer' if kind == 'int' else 'a number'} belongs: the capture is "
                "damaged or was not written by FuseLens")
        mask = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        if kind == "int":
            data = np.fromiter((0 if v is None else v for v in values), dtype=np.int64,
                               count=len(values))
            return pd.arrays.IntegerArray(data, mask)
        data = np.fromiter((np.nan if v is None else v for v in values), dtype=np.float64,
                           count=len(values))
        return data
    return pd.array(values, dtype=object)


def to_frame(description, rows, kinds, where=""):
    """A DataFrame of `rows` (tuples) with the columns of a cursor's `description`. `kinds`
    maps a column to 'int', 'float' or 'str' (None: integers Int64 when every value is one,
    other columns as Python gives them)."""
    pd = _pd()
    names = [d[0] for d in description]
    columns = list(zip(*rows)) if rows else [()] * len(names)
    data = {}
    for name, values in zip(names, columns):
        values = list(values)
        kind = (kinds or {}).get(name)
        if kind is None:
            present = [v for v in values if v is not None]
            if present and all(type(v) is int for v in present):
                kind = "int"
            elif present and all(type(v) is str for v in present):
                kind = "str"
            elif present and all(type(v) in (int, float) for v in present):
                kind = "float"
            else:
                kind = "object"
        data[name] = _column(pd, name, values, kind, where)
    return pd.DataFrame(data, columns=names)


def arrow_type(kind):
    import pyarrow as pa
    return {"int": pa.int64(), "float": pa.float64(), "str": pa.string()}.get(kind, pa.string())


def to_arrow(frame, kinds):
    """`frame` as a pyarrow.Table, each column typed by `kinds` (int64, float64, string); other
    columns as pyarrow infers them."""
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("Arrow tables need pyarrow: pip install pyarrow") from None
    arrays, fields = [], []
    for name in frame.columns:
        series = frame[name]
        kind = kinds.get(name)
        if kind in ("int", "float", "str"):
            typ = arrow_type(kind)
            arrays.append(pa.array(series.to_numpy(dtype=object, na_value=None), type=typ))
        else:
            arrays.append(pa.array(series.to_numpy(dtype=object, na_value=None)))
        fields.append(pa.field(name, arrays[-1].type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
