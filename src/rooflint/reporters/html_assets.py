"""The HTML report's inline style and its one small script (sort, filter, chart tooltips).

The script is CSP-friendly: no eval, no inline event handlers, no network; the page allows it by
its hash (`CSP`), so that a browser refuses anything else the page might be made to load.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;
max-width:1240px;padding:0 16px;color:#1d1d1f}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.summary{font-size:16px;margin:6px 0}.muted{color:#666}.warn{color:#a33;font-weight:600}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:4px 5px;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}
th{background:#f4f4f6;position:sticky;top:0;z-index:1}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}
table.sortable th[aria-sort=descending]::after{content:" \\25BC"}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
details summary{cursor:pointer}.full{overflow-wrap:anywhere;font-size:12px;color:#444}
td.name{word-break:break-all;min-width:min(28em,26vw)}.verdict{white-space:nowrap}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:5px}
#kernels tbody tr.row td{border-bottom:0}
#kernels tr.why td{color:#444;font-size:12.5px;padding:0 6px 7px 3.2em}
#kernels tbody{scroll-margin-top:3em}
#kernels tbody:target,#kernels tbody:target th{background:#fff2b8}
.tools{margin:0 0 8px}#filter{font:inherit;padding:3px 8px;width:24em;max-width:100%}
svg{max-width:100%;height:auto;font-family:system-ui,sans-serif}
svg .pt:hover,svg a:focus .pt{stroke:#000;stroke-width:1.5}
#tip{position:fixed;display:none;pointer-events:none;z-index:2;max-width:560px;padding:5px 8px;
background:#222;color:#fff;border-radius:4px;font-size:12px;white-space:pre-line}
@media print{body{max-width:none;margin:0;padding:0;font-size:11px}.tools,#tip{display:none}
table{font-size:9px}th,td{padding:2px 3px}code,.id,.full{font-size:8.5px}
td.name{min-width:0}th{position:static}#kernels tbody{break-inside:avoid}
#kernels tr.why td{font-size:9px;padding-left:2.5em}h2,h3{break-after:avoid}svg{break-inside:avoid}
a{color:inherit;text-decoration:none}}
"""

# Sorts table.sortable on a header click (the kernel table by its <tbody> per kernel, a plain
# table by its rows) on each cell's data-sort number, else its text; filters the kernel table on
# the text typed in #filter; shows a chart point's details (its <title>) beside the pointer.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var many = table.tBodies.length > 1;
      var units = Array.prototype.slice.call(many ? table.tBodies : table.tBodies[0].rows);
      function key(unit) {
        var cell = (many ? unit.rows[0] : unit).cells[col], raw = cell.getAttribute("data-sort");
        if (raw === null) return cell.textContent.toLowerCase();
        return raw === "" ? null : parseFloat(raw);
      }
      units.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === y) return 0;
        if (x === null) return 1;
        if (y === null) return -1;
        return (x < y ? -1 : 1) * (down ? -1 : 1);
      });
      units.forEach(function (unit) { unit.parentNode.appendChild(unit); });
    });
  });
});
var filter = document.getElementById("filter");
if (filter) filter.addEventListener("input", function () {
  var words = filter.value.trim().toLowerCase(), shown = 0;
  document.querySelectorAll("#kernels tbody").forEach(function (body) {
    var hide = words !== "" && body.getAttribute("data-name").indexOf(words) < 0;
    body.hidden = hide;
    shown += hide ? 0 : 1;
  });
  document.getElementById("shown").textContent = shown;
});
var tip = document.getElementById("tip");
document.querySelectorAll("svg .pt").forEach(function (pt) {
  var title = pt.querySelector("title");
  if (!title) return;
  pt.setAttribute("data-tip", title.textContent);
  title.remove();
  function show(x, y) {
    tip.textContent = pt.getAttribute("data-tip");
    tip.style.display = "block";
    tip.style.left = Math.max(4, Math.min(x + 14, window.innerWidth - tip.offsetWidth - 4)) + "px";
    tip.style.top = Math.max(4, Math.min(y + 14, window.innerHeight - tip.offsetHeight - 4)) + "px";
  }
  pt.addEventListener("mousemove", function (e) { show(e.clientX, e.clientY); });
  pt.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  var link = pt.parentNode;
  link.addEventListener("focus", function () {
    var box = pt.getBoundingClientRect();
    show(box.right, box.bottom);
  });
  link.addEventListener("blur", function () { tip.style.display = "none"; });
});
window.addEventListener("beforeprint", function () {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
});
"""


def _hash(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Nothing from the network, no script but ours: the page is one self-contained file.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    f"script-src 'sha256-{_hash(SCRIPT)}'"
)
