"""Readable short names for long (templated, mangled) kernel names, stable short ids, and outside
text made safe to show."""

from __future__ import annotations

import re

_RETURN_TYPE = re.compile(r"^(void|int|float|double|auto)\s+")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")


# Characters a terminal or a renderer acts on instead of showing them: C0 controls (ESC starts
# the sequences that clear the screen, recolour text or retitle the window; CR and LF fake a new
# line such as "rooflint: PASS"), DEL, C1 (U+009B and U+009D act as ESC [ and ESC ] on some
# terminals), the Arabic letter mark, the bidirectional marks, line and paragraph separators,
# embeddings, overrides and isolates (U+202E shows what follows backwards: CVE-2021-42574),
# and lone surrogates (which have no UTF-8, so writing them fails).
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
# "@name" or "@org/team" where GitHub would notify someone: at the start or after a non-word
_MENTION = re.compile(r"(?<!\w)@(?=[A-Za-z0-9])")
ZERO_WIDTH_JOINER = "\u200d"


def visible(text) -> str:
    """Outside text (a kernel name, a path, a range) with every control character written as an
    escape (`\\x1b`, `\\u202e`): printed, it can only be shown, never obeyed. Every text format
    (terminal, Markdown, HTML, charts) shows outside text through this; CSV, JSON and Parquet
    keep it exact."""
    return _CONTROL.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def unmentioned(text: str) -> str:
    """`text` with a zero-width joiner after each @ that would mention a GitHub user or team
    (`@octocat`, `@org/team`): a PR comment quoting a kernel name or path pings nobody."""
    return _MENTION.sub("@" + ZERO_WIDTH_JOINER, text)


def short_name(full: str, width: int = 48) -> str:
    """Base name plus as many top-level template arguments as fit, nested ones elided; control
    characters shown escaped (`visible`), as a short name is only ever shown.

    `void benchmark_func<HIP_vector_type<float, 2u>, 256, 8u, 0u>(...)` →
    `benchmark_func<HIP_vector_type<…>, 256, 8u, 0u>`; long namespaces keep their last part.
    """
    if not isinstance(full, str) or not full:
        return "(unnamed)"
    base, args = _split_template(_bare(visible(full)))
    if len(base) > width // 2 and "::" in base:
        base = base.rsplit("::", 1)[-1]
    if args is None:
        return _cut(base, width)
    kept: list[str] = []
    for arg in args:
        if len(base) + len(", ".join([*kept, arg])) + 4 > width:
            if not kept and _IDENTIFIER.match(arg):  # `cutlass::Kernel<cutlass_80_tensorop_...>`
                return _cut(f"{base}<{arg}", width - 1) + ">"
            return (
                f"{base}<{', '.join([*kept, '…'])}>"
                if kept or len(base) < width - 3
                else _cut(base, width)
            )
        kept.append(arg)
    return _cut(f"{base}<{', '.join(kept)}>", width)


def short_id(full: str) -> str:
    """A stable 6-hex id for a full kernel name: the same name gives the same id on every run."""
    import hashlib  # here: every command imports this module at start, few need an id

    return hashlib.sha1((full or "").encode("utf-8", "replace")).hexdigest()[:6]


def base_name(full: str) -> str:
    """The name without return type, parameters or template arguments (for fuzzy matching)."""
    if not isinstance(full, str) or not full:
        return ""
    return _split_template(_bare(full))[0]


def signature(full: str) -> str:
    """What CUPTI's and ncu's demangled names of one kernel share: the identifiers that are not
    namespace qualifiers, outside every parenthesised list. The two differ in namespaces (ncu
    drops `native::`, writes `<unnamed>` for `(anonymous namespace)`), literals (`2u`/`2`,
    `false`/`0`), lambdas (`{lambda()#2}`/`[lambda() (instance 2)]`) and parameter lists
    (`T1 const&` for the spelled-out type)."""
    if not isinstance(full, str):
        return ""
    words = _WORD.findall(_without_parentheses(full.replace("<unnamed>", "")))
    return " ".join(w for w in words if w not in _NOT_SIGNATURE)


_WORD = re.compile(r"\b[A-Za-z_]\w*(?!\w)(?!\s*::)")  # an identifier not followed by ::
_NOT_SIGNATURE = {"void", "const", "unsigned", "true", "false", "lambda", "instance", "operator"}


def _without_parentheses(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _bare(full: str) -> str:
    """Without return type or parameters; both spellings of the anonymous namespace as one, so
    that its parentheses are not taken for the parameter list."""
    name = full.strip().replace("<unnamed>", "{anonymous}")
    name = name.replace("(anonymous namespace)", "{anonymous}")
    return _drop_parameters(_RETURN_TYPE.sub("", name))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _drop_parameters(name: str) -> str:
    """Cut the trailing parameter list "(...)" at template depth zero."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0 and i > 0:
            return name[:i]
    return name


def _split_template(name: str) -> tuple[str, list[str] | None]:
    """("base", [top-level args with nested templates elided]) or (name, None)."""
    start = name.find("<")
    if start <= 0:
        return name, None
    args, current, depth = [], [], 0
    for ch in name[start + 1 :]:
        if ch == "<":
            depth += 1
            if depth == 1:
                current.append("<…>")
            continue
        if ch == ">":
            if depth == 0:
                break
            depth -= 1
            continue
        if depth:
            continue
        if ch == ",":
            args.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    args.append("".join(current).strip())
    return name[:start], args
