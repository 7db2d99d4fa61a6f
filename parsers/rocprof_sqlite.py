"""rocprof SQLite: rocprof v1 `--stats` results.db (table KERN) and rocprofv3 rocpd databases."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd

from rooflint.core.errors import InputError

from .rocprof_device import DeviceInfo, agents_from_rocpd

V1_DB = "rocprof v1 results.db"
ROCPD = "rocpd"


def _connect(path: Path) -> sqlite3.Connection:
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True)


def _names(con: sqlite3.Connection) -> dict[str, str]:
    rows = con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')")
    return {name: kind for name, kind in rows}


def kind(path: Path) -> str | None:
    """Which rocprof database this is, or None (another program's SQLite file, or unreadable)."""
    try:
        con = _connect(path)
        try:
            names = _names(con)
        finally:
            con.close()
    except sqlite3.Error:
        return None
    if "KERN" in names:
        return V1_DB
    if "kernels" in names and any(n.startswith("rocpd_") for n in names):
        return ROCPD
    return None


def read_v1(path: Path) -> pd.DataFrame:
    """The KERN table: one row per dispatch, the same columns as a v1 results.csv."""
    con = _connect(path)
    try:
        return pd.read_sql_query('SELECT * FROM "KERN"', con)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise InputError(
            f"cannot read table KERN ({exc}); export the profile again", path=str(path)
        ) from None
    finally:
        con.close()


def read_rocpd(path: Path) -> tuple[pd.DataFrame, pd.DataFrame | None, DeviceInfo]:
    """Kernel dispatches (view `kernels`), their counters (`counters_collection`) and GPU agents.

    Returns the dispatches with rocprofv3-CSV-like column names, the counters as a long table
    (Dispatch_Id, Process_Id, Counter_Name, Counter_Value) or None, and the agents.
    """
    con = _connect(path)
    try:
        names = _names(con)
        kernels = pd.read_sql_query(
            "SELECT dispatch_id AS Dispatch_Id, pid AS Process_Id, agent_abs_index AS Agent_Id, "
            'name AS Kernel_Name, start AS Start_Timestamp, "end" AS End_Timestamp, '
            "grid_x AS Grid_Size_X, grid_y AS Grid_Size_Y, grid_z AS Grid_Size_Z, "
            "workgroup_x AS Workgroup_Size_X, workgroup_y AS Workgroup_Size_Y, "
            "workgroup_z AS Workgroup_Size_Z FROM kernels",
            con,
        )
        counters = None
        if "counters_collection" in names:
            counters = pd.read_sql_query(
                "SELECT dispatch_id AS Dispatch_Id, pid AS Process_Id, "
                "counter_name AS Counter_Name, value AS Counter_Value FROM counters_collection",
                con,
            )
        agents = _agents(con, names)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise InputError(
            f"cannot read the rocpd views ({exc}); the database may come from an "
            "unsupported rocprofv3 version",
            path=str(path),
        ) from None
    finally:
        con.close()
    return kernels, counters, agents


def _agents(con: sqlite3.Connection, names: dict[str, str]) -> DeviceInfo:
    if "rocpd_info_agent" not in names:
        return DeviceInfo()
    rows = pd.read_sql_query("SELECT * FROM rocpd_info_agent", con)
    if "type" in rows:
        rows = rows[rows["type"].astype(str).str.upper() == "GPU"]
    extra = rows.get("extdata", pd.Series(dtype=object)).map(_json)
    rows = rows.assign(
        cu_count=extra.map(lambda d: d.get("cu_count")),
        wave_front_size=extra.map(lambda d: d.get("wave_front_size")),
    )
    return agents_from_rocpd(rows)


def _json(text) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str | bytes) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
