"""``flowc explain --format html`` in a real headless Chromium (DevTools protocol over a
pipe, no network; see tests/browser.py for when it skips): drawn boxes and edges, real
clicks, hostile names, 1,000 chains, screenshots kept as artefacts in pytest's tmp dir."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import pytest

from browser import Browser, find_chromium
from flowc.chaining import build_execution_graph
from flowc.datastream import StreamExecutionEnvironment
from html_pages import big_env, hostile_env, job_graph, page_of


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


def open_page(chromium: str, tmp_path: Path, page: str, name: str = "plan") -> Browser:
    path = tmp_path / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    browser = Browser(chromium, tmp_path / f"{name}-profile")
    try:
        browser.load(path.as_uri())
    except BaseException:
        browser.close()
        raise
    return browser


def texts_fit_their_boxes(b: Browser) -> list[dict[str, Any]]:
    """As rendered, every text of a chain's box lies inside the box (the width estimate in
    Python holds for the browser's font); and the edge labels inside their reserved room."""
    drawn = b.eval("""Array.from(document.querySelectorAll('.vertex')).map(g => {
        const r = g.querySelector('rect').getBoundingClientRect();
        const texts = Array.from(g.querySelectorAll('text')).map(t => {
          const q = t.getBoundingClientRect(); return [q.left, q.top, q.right, q.bottom]; });
        return {id: g.dataset.id, name: g.querySelector('.vname').textContent,
                box: [r.left, r.top, r.right, r.bottom], texts: texts}; })""")
    for d in drawn:
        left, top, right, bottom = d["box"]
        for tl, tt, tr, tb in d["texts"]:
            assert left <= tl and tr <= right + 0.5 and top <= tt and tb <= bottom, d
    return drawn


def drawn_edges_end_on_their_boxes(b: Browser) -> int:
    """As drawn: each edge starts on its source's right side (or on its source's trunk,
    which does) and ends on its target's left side. Returns the number of edges."""
    ends = b.eval("""(() => {
        const box = id => document.querySelector('#' + id + ' rect').getBoundingClientRect();
        const at = (p, len) => p.getPointAtLength(len).matrixTransform(p.getScreenCTM());
        return Array.from(document.querySelectorAll('.edge')).map(e => {
          const p = e.querySelector('path'), a = at(p, 0), z = at(p, p.getTotalLength());
          const s = box(e.dataset.source), t = box(e.dataset.target);
          let start = a, onTrunk = true;
          if (e.dataset.trunk) {
            const tp = document.querySelector('#' + e.dataset.trunk + ' path');
            start = at(tp, 0);
            onTrunk = tp.isPointInStroke(p.getPointAtLength(0)) &&
              document.getElementById(e.dataset.trunk).dataset.source === e.dataset.source;
          }
          return [Math.abs(start.x - s.right) < 1 && s.top < start.y && start.y < s.bottom,
                  onTrunk,
                  Math.abs(z.x - t.left) < 1 && t.top < z.y && z.y < t.bottom]; }); })()""")
    assert all(all(e) for e in ends), [i for i, e in enumerate(ends) if not all(e)]
    return len(ends)


def test_browser_draws_the_plan_and_expands_subtasks_on_click(chromium: str,
                                                              tmp_path: Path) -> None:
    jg = job_graph("examples/hints.flow")
    eg = build_execution_graph(jg)
    ordered = jg.vertices_sorted()
    with open_page(chromium, tmp_path, page_of(jg)) as b:
        drawn = texts_fit_their_boxes(b)
        assert [d["id"] for d in drawn] == [v.id for v in ordered]
        assert drawn[0]["name"] == ordered[0].name
        assert drawn_edges_end_on_their_boxes(b) == sum(len(v.inputs) for v in ordered)
        assert b.eval("document.querySelectorAll('.subtask').length") == 0  # made on demand

        i = next(k for k, v in enumerate(eg.vertices) if v.inputs and v.parallelism > 2)
        b.click(f"#v{i} .expand")
        rows = b.eval(f"""Array.from(document.querySelectorAll(
            '#subtasks-v{i} tr.subtask')).map(r => Array.from(r.cells).map(c => c.textContent))""")
        v = eg.vertices[i]
        assert len(rows) == v.parallelism
        producer = [k for k, u in enumerate(eg.vertices) if u.id == v.inputs[0].edge.source][0]
        regions = [st["region"] for st in eg.to_dict()["vertices"][i]["subtasks"]]
        for k, (label, region, reads) in enumerate(rows):
            assert region == str(regions[k])
            part = v.inputs[0].partitions(k)
            span = str(part.start) if len(part) == 1 else f"{part.start}..{part.stop - 1}"
            assert label == f"{k + 1}/{v.parallelism}"
            assert reads.startswith(f"[{producer + 1}] {v.inputs[0].pattern}: partitions "
                                    f"{span}, subpartition {v.inputs[0].subpartition(k)}")
        assert b.eval("document.querySelector('#details h2').textContent") == \
            f"[{i + 1}] {v.name}"
        b.click(f"#v{i} .expand")  # the toggle closes the list again
        assert b.eval(f"document.getElementById('subtasks-v{i}') === null")

        b.click("#e0 .elabel")
        reasons = b.eval("Array.from(document.querySelectorAll('#details .reason'))"
                         ".map(li => li.textContent)")
        first = ordered[1].inputs[0] if ordered[1].inputs else None
        edge0 = next(e for v in ordered for e in v.inputs)
        assert reasons == [r for _, r in edge0.breaks] and (first is None or reasons)
        b.click(f"#v{i} .expand")
        # Zoom: "fit" shows the whole drawing in the canvas, "1:1" restores it.
        size = "[+document.getElementById('plan').getAttribute('width'), " \
               "document.getElementById('canvas').clientWidth]"
        natural, canvas = b.eval(size)
        assert natural > canvas
        b.click("[data-zoom=fit]")
        assert b.eval(size)[0] <= canvas
        assert b.eval("document.getElementById('canvas').scrollWidth <= "
                      "document.getElementById('canvas').clientWidth")
        b.click("[data-zoom='0']")
        assert b.eval(size)[0] == natural
        b.eval("document.getElementById('canvas').scrollTo(0, 0)")
        shot = tmp_path / "hints-plan.png"
        shot.write_bytes(b.screenshot())
        # The whole drawing at 1:1: a viewport as large as the picture and the panel.
        w, h = b.eval("[document.getElementById('plan').width.baseVal.value + "
                      "document.getElementById('panel').offsetWidth + 20, "
                      "document.getElementById('plan').height.baseVal.value + "
                      "document.querySelector('header').offsetHeight + 20]")
        b.resize(int(w), int(h))
        full = tmp_path / "hints-plan-full.png"
        full.write_bytes(b.screenshot())
        assert b.eval("document.getElementById('canvas').scrollWidth <= "
                      "document.getElementById('canvas').clientWidth")
        assert b.errors == []
    assert png_size(shot) == (1400, 900) and png_size(full) == (int(w), int(h))
    assert not_blank(shot) and not_blank(full)
    print(f"screenshots: {shot} {full}")


def test_browser_runs_no_hostile_name(chromium: str, tmp_path: Path) -> None:
    jg = hostile_env().get_job_graph()
    ordered = jg.vertices_sorted()
    with open_page(chromium, tmp_path, page_of(jg), "hostile") as b:
        assert b.eval("document.querySelectorAll('.vertex').length") == len(ordered) == 3
        for i, v in enumerate(ordered):
            b.click(f"#v{i} .expand")
            b.click(f"#v{i} .box")
            # Names reach the page as text: shown exactly, never run or parsed as markup.
            assert b.eval("document.querySelector('#details h2').textContent") == \
                f"[{i + 1}] {v.name}"
            cells = b.eval("Array.from(document.querySelectorAll('#details td'))"
                           ".map(td => td.textContent)")
            for o in v.operators:
                assert any(c.startswith(o.name) for c in cells)
            assert b.eval(f"document.querySelector('#subtasks-v{i} h3').textContent") == \
                f"Subtasks of [{i + 1}] {v.name} ({v.parallelism})"
        assert b.eval("window.pwned === undefined")
        assert b.eval("document.querySelectorAll('img').length") == 0
        assert b.eval("document.querySelectorAll('script').length") == 2
        assert b.errors == []


def test_browser_fits_wide_and_long_names(chromium: str, tmp_path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    s = env.from_sequence(0, 10).name("点击流 数据源 \u00e9t\u00e9 " + "x" * 80)
    s = s.map(lambda v: v).name("清洗和过滤用户行为")
    s = s.rebalance().map(lambda v: v).name("W" * 200).uid("u")
    s.key_by(lambda v: v).reduce(lambda a, b: a).name("汇总").print()
    with open_page(chromium, tmp_path, page_of(env.get_job_graph()), "wide") as b:
        assert len(texts_fit_their_boxes(b)) == 3
        assert b.errors == []


def test_browser_renders_a_thousand_vertices(chromium: str, tmp_path: Path) -> None:
    jg = big_env(1000).get_job_graph()
    with open_page(chromium, tmp_path, page_of(jg), "big") as b:
        assert b.eval("document.querySelectorAll('.vertex').length") == 1000
        assert drawn_edges_end_on_their_boxes(b) == sum(len(v.inputs)
                                                        for v in jg.vertices.values())
        assert b.eval("document.querySelectorAll('.edge[data-trunk]').length") > 0
        b.click("#v999 .expand")
        assert b.eval("document.querySelectorAll('#subtasks-v999 tr.subtask').length") >= 1
        (tmp_path / "big.png").write_bytes(b.screenshot())
        assert b.errors == []
    assert not_blank(tmp_path / "big.png")


def not_blank(path: Path) -> bool:
    """Many distinct byte values in the inflated pixel rows: a page, not an empty frame."""
    data = path.read_bytes()
    pos, idat = 8, b""
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return len(set(zlib.decompress(idat))) > 64


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


