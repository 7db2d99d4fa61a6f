"""How a Result shows itself (repr, a notebook's HTML): a renderer the API package installs.

It lives apart from `core/result.py`, which needs pandas, so that `import rooflint` can install
it without importing pandas; core imports no reporter.
"""

from __future__ import annotations

from collections.abc import Callable

# show(result, "text" | "html") -> str; rooflint/__init__.py sets it to the format registry's
# notebook reporter (rooflint.reporters.show) when the package is imported.
show: Callable[[object, str], str] | None = None
