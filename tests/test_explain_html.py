"""``flowc explain --format html`` without a browser: the page's structure, escaping,
self-containment, layout, size (test_explain_html_browser.py loads it in Chromium)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from flowc.chaining import build_execution_graph
from flowc.cli import main
from flowc.datastream import DataStream, StreamExecutionEnvironment
from flowc.explain.layout import layered_layout
from flowc.sql import compile_sql_file
from html_pages import HOSTILE, ROOT, Dom, big_env, hostile_env, job_graph, page_of


def translate(attrs: dict[str, str]) -> tuple[float, float]:
    m = re.fullmatch(r"translate\(([-\d.]+),([-\d.]+)\)", attrs["transform"])
    assert m, attrs
    return float(m.group(1)), float(m.group(2))


Rect = tuple[float, float, float, float]
Point = tuple[float, float]


def drawing(page: str) -> tuple[dict[str, Rect], list[dict[str, str]], dict[str, dict[str, str]]]:
    """Vertex id -> (x, y, w, h) from each group's transform and its rect; the edge groups
    and the trunk groups (id -> attributes), each with its path's ``d``."""
    boxes: dict[str, Rect] = {}
    current = None
    groups: list[dict[str, str]] = []
    for tag, a, _ in Dom(page).elements:
        if tag == "g" and "vertex" in a.get("class", ""):
            current = a
        elif tag == "rect" and current is not None and "box" in a.get("class", ""):
            x, y = translate(current)
            boxes[current["id"]] = (x, y, float(a["width"]), float(a["height"]))
            current = None
        elif tag == "g" and a.get("class") in ("edge", "trunk"):
            groups.append(dict(a))
        elif tag == "path" and "d" in a and groups and "d" not in groups[-1]:
            groups[-1]["d"] = a["d"]
    edges = [g for g in groups if g["class"] == "edge"]
    return boxes, edges, {g["id"]: g for g in groups if g["class"] == "trunk"}


def vertices_of(d: str) -> list[Point]:
    """The points a path passes through (M and L points, the ends of C curves)."""
    out = []
    for args in re.findall(r"[MLC]([^MLC]*)", d):
        nums = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", args)]
        out.append((nums[-2], nums[-1]))
    return out


def on_line(p: Point, pts: list[Point]) -> bool:
    """p is one of the points, or on a horizontal straight run between two of them."""
    return p in set(pts) or any(y0 == y1 == p[1] and x0 <= p[0] <= x1
                                for (x0, y0), (x1, y1) in zip(pts, pts[1:]))


def check_edges(page: str) -> tuple[dict[str, Rect], list[dict[str, str]]]:
    """Every edge ends on its target's left side; it starts on its source's right side, or
    on its source's trunk, which starts there."""
    boxes, edges, trunks = drawing(page)
    trunk_points: dict[str, list[Point]] = {}

    def leaves(p: Point, box: Rect) -> bool:
        return abs(p[0] - (box[0] + box[2])) < 0.2 and box[1] < p[1] < box[1] + box[3]

    for e in edges:
        pts = vertices_of(e["d"])
        source, target = boxes[e["data-source"]], boxes[e["data-target"]]
        if "data-trunk" in e:
            trunk = trunks[e["data-trunk"]]
            assert trunk["data-source"] == e["data-source"], e
            along = trunk_points.get(trunk["id"]) or vertices_of(trunk["d"])
            trunk_points[trunk["id"]] = along
            assert leaves(along[0], source) and on_line(pts[0], along), e
        else:
            assert leaves(pts[0], source), e
        (x1, y1) = pts[-1]
        assert abs(x1 - target[0]) < 0.2 and target[1] < y1 < target[1] + target[3], e
        assert pts[0][0] < x1
    return boxes, edges


# ---------------------------------------------------------------------------- no browser


def test_page_draws_every_chain_operator_and_edge() -> None:
    jg = job_graph("examples/hints.flow")
    page = page_of(jg)
    dom = Dom(page)
    ordered = jg.vertices_sorted()
    groups = dom.find("g", "vertex")
    assert [a["data-id"] for a, _ in groups] == [v.id for v in ordered]
    names = [t for _, t in dom.find("text", "vname")]
    assert all(v.name.startswith(n.rstrip("\u2026")) for v, n in zip(ordered, names))
    # Every operator id is drawn, in its chain's box, head first.
    drawn_ops = [a["data-op-id"] for a, _ in dom.find("text", "op")]
    assert drawn_ops == [o.id for v in ordered for o in reversed(v.operators)]
    index = {v.id: f"v{i}" for i, v in enumerate(ordered)}
    expected = [(index[e.source], index[v.id], e.ship_strategy, e.distribution_pattern)
                for v in ordered for e in v.inputs]
    edges = dom.find("g", "edge")
    assert [(a["data-source"], a["data-target"], a["data-ship"], a["data-pattern"])
            for a, _ in edges] == expected
    labels = [t for _, t in dom.find("text", "elabel")]
    assert labels == [f"{s} {p}" for _, _, s, p in expected]
    reasons = [t for _, t in dom.find("text", "ereason")]
    full = ["; ".join(r for _, r in e.breaks) for v in ordered for e in v.inputs]
    assert all(f.startswith(r.rstrip("\u2026")) for r, f in zip(reasons, full))
    assert "slot sharing group changes" in " ".join(reasons)
    # Parallelism and slot groups in each box; the toggles name the subtask counts.
    metas = [t for _, t in dom.find("text", "vmeta")]
    assert metas == [f"p={v.parallelism}  maxp={v.max_parallelism}  "
                     f"slot={v.slot_sharing_group}" for v in ordered]
    eg = build_execution_graph(jg)
    toggles = [t for _, t in dom.find("text", "expand")]
    assert toggles == [f"\u25b8 {v.parallelism} subtask{'s' if v.parallelism != 1 else ''}"
                       for v in eg.vertices]


def test_edges_leave_and_enter_the_right_boxes() -> None:
    for path in ("examples/hints.flow", "examples/join.flow", "examples/sessions.flow"):
        assert check_edges(page_of(job_graph(path)))[1]


def test_page_data_carries_the_execution_graph_subtasks() -> None:
    jg = job_graph("examples/hints.flow")
    data = json.loads(re.search(r'<script type="application/json" id="plan-data">(.*?)'
                                r"</script>", page_of(jg), re.S).group(1))
    eg = build_execution_graph(jg).to_dict()
    assert len(data["vertices"]) == len(eg["vertices"])
    for dv, ev in zip(data["vertices"], eg["vertices"]):
        assert dv["id"] == ev["id"] and dv["p"] == ev["parallelism"]
        regions = [r for r, n in dv["regions"] for _ in range(n)]
        assert regions == [st["region"] for st in ev["subtasks"]]
        for j, (producer, pattern, producer_p, wiring) in enumerate(dv["inputs"]):
            assert data["vertices"][producer]["id"] == ev["subtasks"][0]["inputs"][j]["producer"]
            assert wiring is not None or pattern == "ALL_TO_ALL" or ev["parallelism"] == 1
            for k, st in enumerate(ev["subtasks"]):
                c = st["inputs"][j]
                assert c["distribution_pattern"] == pattern
                w = [0, producer_p, k] if wiring is None else wiring[k]
                assert w == [*c["partitions"], c["subpartition"]]
    assert sum(1 for v in data["vertices"] for i in v["inputs"] if i[3] is not None) > 0


def test_hostile_names_are_escaped() -> None:
    page = page_of(hostile_env().get_job_graph())
    # Only the page's own two scripts, and nothing but them runs: no name opened an element.
    assert page.count("<script") == 2 and page.count("</script>") == 2
    dom = Dom(page)
    assert [tag for tag, _, _ in dom.elements].count("img") == 0
    assert all("onerror" not in a for _, a, _ in dom.elements)
    titles = [t for a, t in dom.find("title")]
    for name in HOSTILE[:2]:
        assert any(name in t for t in titles)  # the parser gets the text back, unchanged
    island = re.search(r'id="plan-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in island and ">" not in island and "&" not in island
    data = json.loads(island)
    names = [o[0] for v in data["vertices"] for o in v["ops"]]
    assert names[:3] == [f"Source: {HOSTILE[0]}", HOSTILE[1], HOSTILE[3]]
    assert HOSTILE[2] in [o[2] for v in data["vertices"] for o in v["ops"]]


def self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    dom = Dom(page)
    for tag, attrs, _ in dom.elements:
        assert tag not in ("link", "img", "iframe", "object", "embed", "base"), tag
        assert not {"src", "href", "srcset", "xlink:href"} & set(attrs), (tag, attrs)
    assert "@import" not in page and "url(" not in page.replace("url(#arrow)", "")


@pytest.mark.parametrize("path", ["examples/clicks.flow", "examples/join.flow",
                                  "examples/sessions.flow", "examples/hints.flow",
                                  "examples/clicks.sql", "examples/wordcount.py"])
def test_cli_writes_a_self_contained_page(path: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "plan.html"
    assert main(["explain", path, "--format", "html", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    assert f"<title>{path}</title>" in page
    self_contained(page)
    assert Dom(page).find("g", "vertex")


def test_cli_html_to_stdout_matches_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["explain", "examples/clicks.flow", "--format", "html"]) == 0
    stdout = capsys.readouterr().out
    out = tmp_path / "p.html"
    assert main(["explain", "examples/clicks.flow", "--format", "html", "--level",
                 "execution", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert out.read_text(encoding="utf-8") == stdout  # deterministic; both levels: one page


def test_cli_html_errors_are_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["explain", "examples/clicks.flow", "--format", "html", "--level",
                 "stream"]) == 1
    assert "use --level job or --level execution" in capsys.readouterr().err
    bad = tmp_path / "missing" / "p.html"
    assert main(["explain", "examples/clicks.flow", "--format", "html", "-o", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {bad}" in err and "Traceback" not in err


SQL_TABLE = """CREATE TABLE clicks (user_id STRING, action STRING, ts TIMESTAMP(3))
  WITH ('connector' = 'filesystem', 'path' = 'data/clicks.csv', 'format' = 'csv');
"""


def test_cli_html_of_sql_explain_statements(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT / "examples")
    one = tmp_path / "one.sql"
    one.write_text(SQL_TABLE + "EXPLAIN SELECT user_id FROM clicks WHERE action = 'x';\n")
    assert main(["explain", str(one), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert f"<title>{one}: EXPLAIN at {one}:3" in page and Dom(page).find("g", "vertex")
    two = tmp_path / "two.sql"
    two.write_text(SQL_TABLE + "EXPLAIN SELECT user_id FROM clicks;\n"
                   "EXPLAIN SELECT action FROM clicks;\n")
    assert main(["explain", str(two), "--format", "html"]) == 1
    assert "has 2 EXPLAIN statements" in capsys.readouterr().err
    assert main(["explain", str(two)]) == 0  # the text format lists both, as before
    assert capsys.readouterr().out.count("-- EXPLAIN at") == 2
    job = tmp_path / "job.sql"
    job.write_text((ROOT / "examples/clicks.sql").read_text() + "EXPLAIN SELECT action FROM "
                   "clicks;\n")
    assert main(["explain", str(job), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert f"<title>{job}</title>" in page and "EXPLAIN" not in page  # the job, one page
    expected = compile_sql_file(str(job)).env.get_job_graph()
    assert [a["data-id"] for a, _ in Dom(page).find("g", "vertex")] == \
        [v.id for v in expected.vertices_sorted()]


def test_cli_output_option_works_for_text_too(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "plan.txt"
    assert main(["explain", "examples/clicks.flow", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert out.read_text() == (ROOT / "tests/golden/explain/clicks.job.text").read_text()


def test_a_long_chain_lists_its_first_operators_and_counts_the_rest() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    s: DataStream = env.from_sequence(0, 10)
    for k in range(30):
        s = s.map(lambda v: v).name(f"m{k}")
    s.print()
    page = page_of(env.get_job_graph())
    dom = Dom(page)
    assert [t.split()[0] for _, t in dom.find("text", "op")] == \
        ["Source:"] + [f"m{k}" for k in range(8)]
    assert [t for _, t in dom.find("text", "more")] == ["\u2026 and 23 more operators"]
    data = json.loads(re.search(r'id="plan-data">(.*?)</script>', page, re.S).group(1))
    assert [o[0] for o in data["vertices"][0]["ops"]][1:31] == [f"m{k}" for k in range(30)]


def test_wide_characters_take_two_cells() -> None:
    """CJK characters are about twice as wide as a monospace cell (the browser test checks
    it as rendered, where a CJK font is installed)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(0, 10).name("汇" * 40).print()
    boxes, _, _ = drawing(page_of(env.get_job_graph()))
    (_, _, width, _), = boxes.values()
    assert width >= (len("Source: ") + 80) * 7.2


def test_layout_rejects_edges_against_the_order() -> None:
    with pytest.raises(ValueError, match="topological"):
        layered_layout([(10, 10), (10, 10)], [(1, 0)], [(5, 5)])


@pytest.mark.parametrize("seed", range(5))
def test_layout_keeps_boxes_and_labels_apart(seed: int) -> None:
    import random

    rng = random.Random(seed)
    n = 60
    sizes = [(rng.uniform(80, 300), rng.uniform(40, 160)) for _ in range(n)]
    edges = sorted({(s, t) for t in range(1, n) for s in rng.sample(range(t), min(t, 2))})
    layout = layered_layout(sizes, edges, [(rng.uniform(60, 200), 30.0) for _ in edges])
    assert [(b.w, b.h) for b in layout.boxes] == sizes
    no_overlaps([(b.x, b.y, b.w, b.h) for b in layout.boxes]
                + [(r.label.x, r.label.y, r.label.w, r.label.h) for r in layout.routes])
    for (s, t), r in zip(edges, layout.routes):
        assert r.label.x + r.label.w <= layout.boxes[t].x  # the label just before the target
        assert layout.boxes[s].x + layout.boxes[s].w <= r.label.x
        assert r.points[-1][0] == layout.boxes[t].x


def test_layout_draws_the_longest_edges_straight_past_the_budget() -> None:
    """A pipeline of 400 stages each also feeding the last: routing all of them around the
    boxes would take ~160,000 dummies; the longest go straight across instead."""
    n = 400
    edges = [(k, k + 1) for k in range(n - 1)] + [(k, n - 1) for k in range(n - 2)]
    started = time.perf_counter()
    layout = layered_layout([(100.0, 50.0)] * n, edges, [(80.0, 30.0)] * len(edges))
    assert time.perf_counter() - started < 10
    direct = [r for r in layout.routes if r.trunk is None and len(r.points) == 4]
    assert len(direct) > n // 2  # only their label's dummy: start, label, label, end
    assert sum(len(r.points) for r in layout.routes) < 25_000
    no_overlaps([(b.x, b.y, b.w, b.h) for b in layout.boxes])


def no_overlaps(boxes: list[tuple[float, float, float, float]]) -> None:
    """No two boxes intersect: sorted by left edge, each is compared with those that start
    before it ends horizontally."""
    ordered = sorted(boxes)
    for i, (x, y, w, h) in enumerate(ordered):
        for x2, y2, w2, h2 in ordered[i + 1:]:
            if x2 >= x + w - 1e-6:
                break
            assert y2 >= y + h - 1e-6 or y >= y2 + h2 - 1e-6, ((x, y, w, h), (x2, y2, w2, h2))


def test_a_thousand_vertices_render_fast_and_small() -> None:
    jg = big_env(1000).get_job_graph()
    assert len(jg.vertices) == 1000
    started = time.perf_counter()
    page = page_of(jg)
    seconds = time.perf_counter() - started
    assert seconds < 15, seconds  # about 1 s on the 2-core CI machine
    assert len(page.encode()) < 4_000_000, len(page)
    boxes, edges = check_edges(page)
    assert len(boxes) == 1000 and len(edges) == sum(len(v.inputs) for v in jg.vertices.values())
    no_overlaps(list(boxes.values()))


def test_a_source_feeding_every_stage_stays_linear() -> None:
    """Each stage also reads the source: routing every edge around the boxes it passes would
    take ~500,000 dummies; past the budget the longest edges go straight across."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    src = env.from_sequence(0, 10)
    s = src.map(lambda v: v)
    for _ in range(1000):
        s = s.union(src).rebalance().map(lambda v: v)
    s.print()
    jg = env.get_job_graph()
    started = time.perf_counter()
    page = page_of(jg)
    assert time.perf_counter() - started < 20  # about 2 s
    assert len(page.encode()) < 4_000_000, len(page)
    boxes, edges = check_edges(page)
    assert len(edges) == sum(len(v.inputs) for v in jg.vertices.values()) == 2000
    no_overlaps(list(boxes.values()))
    # The source's 1,000 edges run as one trunk, drawn once.
    assert len({e["data-trunk"] for e in edges if "data-trunk" in e}) <= 2


def test_the_page_grows_with_vertices_not_subtasks() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1000)
    s: DataStream = env.from_sequence(0, 10)
    for _ in range(49):
        s = s.rebalance().map(lambda v: v)
    s.print()
    started = time.perf_counter()
    page = page_of(env.get_job_graph())
    assert time.perf_counter() - started < 20  # 50,000 subtasks
    assert len(page.encode()) < 150_000, len(page)
    assert "50000 subtasks" in page
