"""Readable short names for long (templated, mangled) kernel names, and stable short ids."""

from __future__ import annotations

import hashlib
import re

_RETURN_TYPE = re.compile(r"^(void|int|float|double|auto)\s+")
_WRAPPER = re.compile(r"^[\w:]*(?:[Kk]ernel\d?|device_kernel)<([A-Za-z_]\w*)>$")


def short_name(full: str, width: int = 48) -> str:
    """Base name with template arguments elided and parameters dropped, cut to `width`.

    `void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_...>(T1::Params)` → `cutlass::Kernel<…>`.
    """
    if not isinstance(full, str) or not full:
        return "(unnamed)"
    name = _RETURN_TYPE.sub("", full.strip()).replace("<unnamed>", "{anonymous}")
    name = _drop_parameters(name)
    wrapped = _WRAPPER.match(name)
    name = _elide_templates(name)
    if wrapped:  # `cutlass::Kernel<cutlass_80_tensorop_s1688gemm_...>`: the argument is the name
        name = name.replace("<…>", "<" + wrapped.group(1) + ">", 1)
    if len(name) > width:
        name = name[: width - 1] + "…"
    return name


def short_id(full: str) -> str:
    """A stable 6-hex id for a full kernel name: the same name gives the same id on every run."""
    return hashlib.sha1((full or "").encode("utf-8", "replace")).hexdigest()[:6]


def base_name(full: str) -> str:
    """The demangled base name with template arguments and parameters removed (diff matching)."""
    return short_name(full, width=10_000).replace("<…>", "")


def _drop_parameters(name: str) -> str:
    """Cut the trailing parameter list "(...)" at depth zero of templates."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0 and i > 0:
            return name[:i]
    return name


def _elide_templates(name: str) -> str:
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)
