"""``--format html``: one self-contained page drawing the JobGraph as a DAG.

The page is built from the documented ``to_dict()`` of the JobGraph and ExecutionGraph
(docs/plan-format.md), laid out in Python (``flowc.explain.layout``) and emitted as inline
SVG, with a little inline CSS and JS: clicking a chain shows its operators, clicking an edge
why it is not chained, and a chain's "subtasks" toggle lists its ExecutionGraph subtasks
(made only then, so a large graph's page stays small). Nothing is loaded from anywhere: no
URLs, no fonts, no libraries. Every name is escaped (``html.escape`` in markup, and the
JSON island cannot close its ``<script>``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from unicodedata import east_asian_width

from flowc.explain.layout import Box, Route, layered_layout

CHAR_W = 7.3  # width of a 12px monospace character (DejaVu Sans Mono is 0.602 em)
SMALL_W = 6.7  # 11px
TINY_W = 6.1  # 10px
LINE_H = 15.0
PAD = 8.0
NAME_CHARS = 48
OP_NAME_CHARS = 26
MAX_OPS = 10  # operators listed in a box; the details panel lists all of them
REASON_CHARS = 34
PALETTE = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#ede9fe", "#ccfbf1", "#fee2e2",
           "#e0e7ff", "#f3e8ff", "#ecfccb")


def _cells(s: str) -> int:
    """Monospace cells a string takes: wide (CJK) characters take two."""
    return len(s) + sum(1 for c in s if east_asian_width(c) in "WF")


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "\u2026"


def _a(s: object) -> str:
    return escape(str(s), quote=True)


def _p(p: int) -> str:
    return "default" if p == -1 else str(p)


def _json_island(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>`` or
    ``&`` survives, so no name can end the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _ops_shown(ops: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], int]:
    """Operators head first (the dict lists Flink's order, head last), at most MAX_OPS."""
    ordered = list(reversed(ops))
    if len(ordered) <= MAX_OPS:
        return ordered, 0
    return ordered[: MAX_OPS - 1], len(ordered) - (MAX_OPS - 1)


def _name_chars(v: Mapping[str, Any]) -> int:
    """The chained name may use the width the other lines take anyway."""
    shown, _ = _ops_shown(v["operators"])
    rest = max([_cells(_meta(v)) * SMALL_W, 16 * SMALL_W]
               + [(_cells(_cut(o["name"], OP_NAME_CHARS)) + 2 + len(o["id"])) * SMALL_W
                  for o in shown])
    return max(NAME_CHARS, int(rest / CHAR_W))


def _box_size(v: Mapping[str, Any]) -> tuple[float, float]:
    shown, more = _ops_shown(v["operators"])
    w = max(_cells(_cut(v["name"], _name_chars(v))) * CHAR_W,
            _cells(_meta(v)) * SMALL_W,
            max((_cells(_cut(o["name"], OP_NAME_CHARS)) + 2 + len(o["id"]) for o in shown),
                default=0) * SMALL_W,
            16 * SMALL_W)
    lines = 2 + len(shown) + (1 if more else 0) + 1  # name, meta, operators, "more", toggle
    return round(w + 2 * PAD, 1), round(lines * LINE_H + PAD + 6, 1)


def _meta(v: Mapping[str, Any]) -> str:
    return (f"p={_p(v['parallelism'])}  maxp={_p(v['max_parallelism'])}  "
            f"slot={v['slot_sharing_group']}")


def _edge_lines(e: Mapping[str, Any]) -> tuple[str, str]:
    head = f"{e['ship_strategy']} {e['distribution_pattern']}"
    if e["result_type"] == "BLOCKING":
        head += " BLOCKING"
    reasons = "; ".join(e["not_chained_because"])
    return head, _cut(reasons, REASON_CHARS)


def _label_size(e: Mapping[str, Any]) -> tuple[float, float]:
    head, reason = _edge_lines(e)
    return round(max(_cells(head) * SMALL_W, _cells(reason) * TINY_W) + 2 * PAD, 1), 34.0


def html_page(job: Mapping[str, Any], execution: Mapping[str, Any],
              title: str = "flowc plan") -> str:
    """The page for a JobGraph ``to_dict()`` and its ExecutionGraph's ``to_dict()``."""
    vertices = job["vertices"]
    index = {v["id"]: i for i, v in enumerate(vertices)}
    edges = [(index[e["producer"]], t, e) for t, v in enumerate(vertices) for e in v["inputs"]]
    layout = layered_layout([_box_size(v) for v in vertices], [(s, t) for s, t, _ in edges],
                            [_label_size(e) for _, _, e in edges])
    groups: dict[str, str] = {}
    for v in vertices:
        groups.setdefault(v["slot_sharing_group"], PALETTE[len(groups) % len(PALETTE)])
    ex_vertices = {v["id"]: v for v in execution["vertices"]}
    subtasks = sum(v["parallelism"] for v in execution["vertices"])
    n_ops = sum(len(v["operators"]) for v in vertices)

    svg = [f'<svg id="plan" width="{layout.width:.0f}" height="{layout.height:.0f}" '
           f'viewBox="0 0 {layout.width:.0f} {layout.height:.0f}" role="img" '
           f'aria-label="JobGraph">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker>'
           '</defs>']
    for j, trunk in enumerate(layout.trunks):
        svg.append(f'<g class="trunk" id="t{j}" data-source="v{trunk.source}">'
                   f'<path d="{_path(trunk.points)}"/></g>')
    for k, ((s, t, e), route) in enumerate(zip(edges, layout.routes)):
        svg.append(_edge_svg(k, s, t, e, route, vertices))
    for i, (v, box) in enumerate(zip(vertices, layout.boxes)):
        ex = ex_vertices[v["id"]]
        svg.append(_vertex_svg(i, v, box, groups[v["slot_sharing_group"]], ex["parallelism"]))
    svg.append("</svg>")

    legend = "".join(f'<span class="group"><i style="background:{c}"></i>{_a(g)}</span>'
                     for g, c in groups.items())
    summary = (f"{job['mode']} \u00b7 {len(vertices)} chains \u00b7 {n_ops} operators \u00b7 "
               f"{len(edges)} edges \u00b7 {subtasks} subtasks \u00b7 "
               f"{execution['pipelined_regions']} pipelined regions \u00b7 "
               f"{job['slots_required']} slots")
    data = _page_data(vertices, edges, ex_vertices, index)
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_a(title)}</title><style>{CSS}</style></head><body>",
        f'<header><h1>{_a(title)}</h1><p id="summary">{_a(summary)}</p>',
        f'<p class="legend">slot sharing groups: {legend}</p>',
        '<p class="tools"><button type="button" data-zoom="0.8">\u2212</button>'
        '<button type="button" data-zoom="0">1:1</button>'
        '<button type="button" data-zoom="1.25">+</button>'
        '<button type="button" data-zoom="fit">fit</button> click a chain for its operators, '
        'an edge for why it is not chained, \u25b8 for its subtasks</p></header>',
        '<main><div id="canvas">', "\n".join(svg), "</div>",
        '<aside id="panel"><section id="details"><p class="hint">Nothing selected.</p>'
        '</section><section id="subtasks"></section></aside></main>',
        f'<script type="application/json" id="plan-data">{_json_island(data)}</script>',
        f"<script>{JS}</script></body></html>\n",
    ])


def _vertex_svg(i: int, v: Mapping[str, Any], box: Box, fill: str, parallelism: int) -> str:
    shown, more = _ops_shown(v["operators"])
    out = [f'<g class="vertex" id="v{i}" data-index="{i}" data-id="{_a(v["id"])}" '
           f'data-parallelism="{parallelism}" transform="translate({box.x:.1f},{box.y:.1f})">',
           f"<title>{_a(v['name'])}</title>",
           f'<rect class="box" width="{box.w:.1f}" height="{box.h:.1f}" rx="6" '
           f'fill="{fill}"/>']
    y = PAD + 11
    out.append(f'<text class="vname" x="{PAD}" y="{y:.0f}">{_a(_cut(v["name"], _name_chars(v)))}'
               "</text>")
    y += LINE_H
    out.append(f'<text class="vmeta" x="{PAD}" y="{y:.0f}">{_a(_meta(v))}</text>')
    for o in shown:
        y += LINE_H
        line = f" (line {o['line']})" if o["line"] else ""
        out.append(f'<text class="op" x="{PAD}" y="{y:.0f}" data-op-id="{_a(o["id"])}">'
                   f"<title>{_a(o['name'] + line)}</title>"
                   f"{_a(_cut(o['name'], OP_NAME_CHARS))}  "
                   f'<tspan class="opid">{_a(o["id"])}</tspan></text>')
    if more:
        y += LINE_H
        out.append(f'<text class="more" x="{PAD}" y="{y:.0f}">\u2026 and {more} more '
                   "operators</text>")
    y += LINE_H + 2
    out.append(f'<text class="expand" x="{PAD}" y="{y:.0f}" role="button">'
               f"\u25b8 {parallelism} subtask{'s' if parallelism != 1 else ''}</text>")
    out.append("</g>")
    return "".join(out)


def _path(pts: Sequence[tuple[float, float]]) -> str:
    d = [f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if y0 == y1:
            d.append(f"L{x1:.1f},{y1:.1f}")
        else:  # horizontal tangents at both ends, as Graphviz's splines
            mx = (x0 + x1) / 2
            d.append(f"C{mx:.1f},{y0:.1f} {mx:.1f},{y1:.1f} {x1:.1f},{y1:.1f}")
    return "".join(d)


def _edge_svg(k: int, s: int, t: int, e: Mapping[str, Any], route: Route,
              vertices: Sequence[Mapping[str, Any]]) -> str:
    head, reason = _edge_lines(e)
    full = "; ".join(e["not_chained_because"])
    tag = f", side output {e['output_tag']}" if e["output_tag"] else ""
    tip = (f"[{s + 1}] {vertices[s]['name']} -> [{t + 1}] {vertices[t]['name']}: "
           f"{e['ship_strategy']} {e['distribution_pattern']} {e['result_type']}{tag}; "
           f"not chained: {full}")
    lb = route.label
    cx = lb.x + lb.w / 2
    trunk = "" if route.trunk is None else f' data-trunk="t{route.trunk}"'
    return (f'<g class="edge" id="e{k}" data-index="{k}" data-source="v{s}" '
            f'data-target="v{t}"{trunk} data-ship="{_a(e["ship_strategy"])}" '
            f'data-pattern="{_a(e["distribution_pattern"])}"><title>{_a(tip)}</title>'
            f'<path d="{_path(route.points)}" marker-end="url(#arrow)"/>'
            f'<text class="elabel" x="{cx:.1f}" y="{lb.y + 12:.1f}">{_a(head)}</text>'
            f'<text class="ereason" x="{cx:.1f}" y="{lb.y + 30:.1f}">{_a(reason)}</text></g>')


def _page_data(vertices: Sequence[Mapping[str, Any]], edges: Sequence[tuple[int, int, Any]],
               ex_vertices: Mapping[str, Mapping[str, Any]],
               index: Mapping[str, int]) -> dict[str, Any]:
    """What the page's script needs, compactly, so the page grows with the number of
    vertices, not of subtasks: per vertex its details, the subtasks' regions run-length
    encoded (``[[region, count], ...]``), and per input the producer's index, the pattern
    and the wiring: ``null`` when subtask k reads every partition, subpartition k (ALL_TO_ALL,
    docs/plan-format.md), else ``[start, stop, subpartition]`` per subtask."""
    out_v = []
    for v in vertices:
        ex = ex_vertices[v["id"]]
        subtasks = ex["subtasks"]
        regions: list[list[int]] = []
        for st in subtasks:
            if regions and regions[-1][0] == st["region"]:
                regions[-1][1] += 1
            else:
                regions.append([st["region"], 1])
        inputs = []
        for j, c in enumerate(subtasks[0]["inputs"] if subtasks else []):
            wiring = [[*st["inputs"][j]["partitions"], st["inputs"][j]["subpartition"]]
                      for st in subtasks]
            producer_p = ex_vertices[c["producer"]]["parallelism"]
            reads_all = all(w == [0, producer_p, k] for k, w in enumerate(wiring))
            inputs.append([index[c["producer"]], c["distribution_pattern"], producer_p,
                           None if reads_all else wiring])
        out_v.append({
            "name": v["name"], "id": v["id"], "p": ex["parallelism"],
            "maxp": ex["max_parallelism"], "slot": v["slot_sharing_group"],
            "region": v["pipelined_region"],
            "ops": [[o["name"], o["id"], o["uid"], o["uid_hash"], o["line"]]
                    for o in reversed(v["operators"])],
            "inputs": inputs, "regions": regions,
        })
    out_e = [{"s": s, "t": t, "ship": e["ship_strategy"], "pattern": e["distribution_pattern"],
              "result": e["result_type"], "dataset": e["dataset"], "tag": e["output_tag"],
              "input": e["type_number"], "reasons": e["not_chained_because"]}
             for s, t, e in edges]
    return {"vertices": out_v, "edges": out_e}


CSS = """
*{box-sizing:border-box}
body{margin:0;font:13px system-ui,sans-serif;color:#1f2937;display:flex;flex-direction:column;
height:100vh}
header{padding:6px 12px;border-bottom:1px solid #d1d5db;background:#f9fafb}
h1{font-size:15px;margin:0 0 2px}
header p{margin:2px 0}
.group{margin-right:10px;white-space:nowrap}
.group i{display:inline-block;width:11px;height:11px;border:1px solid #9ca3af;margin-right:4px;
vertical-align:-1px}
.tools button{font:inherit;min-width:28px;margin-right:3px}
main{flex:1;display:flex;min-height:0}
#canvas{flex:1;overflow:auto;background:#fff}
#panel{width:420px;overflow:auto;border-left:1px solid #d1d5db;padding:8px 10px;
background:#fcfcfd}
svg text{font-family:"DejaVu Sans Mono",monospace;font-size:11px;fill:#111827}
.vertex{cursor:pointer}
.box{stroke:#4b5563;stroke-width:1}
.vertex.selected .box{stroke:#dc2626;stroke-width:2.5}
.vertex.expanded .box{stroke-dasharray:5 3}
.vname{font-size:12px;font-weight:bold}
.vmeta{fill:#374151}
.opid{fill:#6b7280}
.more{fill:#6b7280;font-style:italic}
.expand{fill:#1d4ed8;text-decoration:underline}
.edge{cursor:pointer}
.edge path,.trunk path{fill:none;stroke:#4b5563;stroke-width:1.4}
.edge.selected path{stroke:#dc2626;stroke-width:2.5}
.elabel{text-anchor:middle;fill:#1e3a8a}
.ereason{text-anchor:middle;font-size:10px;font-style:italic;fill:#6b7280}
#panel h2{font-size:14px;margin:4px 0}
#panel h3{font-size:13px;margin:10px 0 4px}
#panel table{border-collapse:collapse;width:100%;font-size:12px}
#panel td,#panel th{border-bottom:1px solid #e5e7eb;padding:2px 4px;text-align:left;
vertical-align:top}
#panel code{font-size:11px;word-break:break-all}
.hint{color:#6b7280}
.close{float:right;font:inherit}
"""

JS = """
(function () {
"use strict";
var data = JSON.parse(document.getElementById("plan-data").textContent);
var svg = document.getElementById("plan");
var details = document.getElementById("details");
var lists = document.getElementById("subtasks");
var W = +svg.getAttribute("width"), H = +svg.getAttribute("height"), scale = 1;
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;  // never innerHTML: names are data
  return e;
}
function vname(i) { return "[" + (i + 1) + "] " + data.vertices[i].name; }
function row(table, cells) {
  var tr = el("tr");
  cells.forEach(function (c) { tr.appendChild(typeof c === "string" ? el("td", "", c) : c); });
  table.appendChild(tr);
  return tr;
}
function code(s) { var td = el("td"); td.appendChild(el("code", "", s)); return td; }
function select(node) {
  Array.prototype.forEach.call(svg.querySelectorAll(".selected"),
    function (n) { n.classList.remove("selected"); });
  if (node) node.classList.add("selected");
}
function showVertex(i) {
  var v = data.vertices[i], t = el("table");
  details.replaceChildren(el("h2", "", vname(i)));
  row(t, ["vertex id", code(v.id)]);
  row(t, ["parallelism", String(v.p)]);
  row(t, ["max parallelism", String(v.maxp)]);
  row(t, ["slot sharing group", v.slot]);
  row(t, ["pipelined region", String(v.region)]);
  details.appendChild(t);
  details.appendChild(el("h3", "", "Operators (head first)"));
  var ops = el("table");
  row(ops, [el("th", "", "name"), el("th", "", "operator id"), el("th", "", "line")]);
  v.ops.forEach(function (o) {
    var extra = (o[2] ? " uid=" + o[2] : "") + (o[3] ? " uidHash=" + o[3] : "");
    row(ops, [o[0] + extra, code(o[1]), o[4] === null ? "" : String(o[4])]);
  });
  details.appendChild(ops);
}
function showEdge(k) {
  var e = data.edges[k], t = el("table");
  details.replaceChildren(el("h2", "", vname(e.s) + " \\u2192 " + vname(e.t)));
  row(t, ["ship strategy", e.ship]);
  row(t, ["distribution", e.pattern]);
  row(t, ["result type", e.result]);
  row(t, ["data set", String(e.dataset)]);
  if (e.input) row(t, ["input", String(e.input)]);
  if (e.tag) row(t, ["side output", e.tag]);
  details.appendChild(t);
  details.appendChild(el("h3", "", "Not chained because"));
  var ul = el("ul");
  e.reasons.forEach(function (r) { ul.appendChild(el("li", "reason", r)); });
  details.appendChild(ul);
}
function range(a, b) { return b - a === 1 ? String(a) : a + ".." + (b - 1); }
function expand(i) {
  var g = document.getElementById("v" + i), open = document.getElementById("subtasks-v" + i);
  var toggle = g.querySelector(".expand"), v = data.vertices[i];
  if (open) {
    open.remove();
    g.classList.remove("expanded");
    toggle.textContent = "\\u25b8" + toggle.textContent.slice(1);
    return;
  }
  var sec = el("section", "subtask-list");
  sec.id = "subtasks-v" + i;
  sec.dataset.vertex = i;
  var close = el("button", "close", "\\u00d7");
  close.type = "button";
  close.addEventListener("click", function () { expand(i); });
  sec.appendChild(close);
  sec.appendChild(el("h3", "", "Subtasks of " + vname(i) + " (" + v.p + ")"));
  var t = el("table");
  row(t, [el("th", "", "subtask"), el("th", "", "region"), el("th", "", "reads")]);
  var region = [];
  v.regions.forEach(function (rc) { for (var n = 0; n < rc[1]; n++) region.push(rc[0]); });
  for (var k = 0; k < v.p; k++) {
    var reads = v.inputs.map(function (inp) {
      var w = inp[3] === null ? [0, inp[2], k] : inp[3][k];
      return "[" + (inp[0] + 1) + "] " + inp[1] + ": partitions " + range(w[0], w[1]) +
        ", subpartition " + w[2];
    }).join("; ");
    var tr = row(t, [(k + 1) + "/" + v.p, String(region[k]), reads || "(source)"]);
    tr.className = "subtask";
    tr.dataset.vertex = i;
    tr.dataset.index = k;
  }
  sec.appendChild(t);
  lists.insertBefore(sec, lists.firstChild);
  g.classList.add("expanded");
  toggle.textContent = "\\u25be" + toggle.textContent.slice(1);
}
svg.addEventListener("click", function (ev) {
  var vg = ev.target.closest(".vertex"), eg = ev.target.closest(".edge");
  if (vg) {
    var i = +vg.dataset.index;
    if (ev.target.closest(".expand")) expand(i);
    select(vg);
    showVertex(i);
  } else if (eg) {
    select(eg);
    showEdge(+eg.dataset.index);
  }
});
document.querySelector(".tools").addEventListener("click", function (ev) {
  var f = ev.target.dataset ? ev.target.dataset.zoom : undefined;
  if (f === undefined) return;
  var canvas = document.getElementById("canvas");
  scale = f === "fit" ? Math.min(1, canvas.clientWidth / W, canvas.clientHeight / H)
        : +f === 0 ? 1 : scale * +f;
  svg.setAttribute("width", String(Math.round(W * scale)));
  svg.setAttribute("height", String(Math.round(H * scale)));
});
// #expand=0,2&select=1&zoom=fit: act as if those toggles, that chain and that zoom button were
// clicked (for links, and for a screenshot taken without a click).
function click(node) {
  if (node) node.dispatchEvent(new MouseEvent("click", {bubbles: true}));
}
location.hash.slice(1).split("&").forEach(function (part) {
  var kv = part.split("=");
  if (kv.length !== 2) return;
  if (kv[0] === "zoom") {
    return click(Array.prototype.find.call(document.querySelectorAll("[data-zoom]"),
      function (b) { return b.dataset.zoom === kv[1]; }));
  }
  kv[1].split(",").forEach(function (n) {
    var g = document.getElementById("v" + parseInt(n, 10));
    if (g) click(kv[0] === "expand" ? g.querySelector(".expand") : g.querySelector(".box"));
  });
});
document.body.dataset.ready = "1";
})();
"""
