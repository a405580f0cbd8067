#!/usr/bin/env python3
"""Writes docs/benchmarks.md and docs/benchmarks.svg from a `run.py` results file (standard
library only, no network): every number in them is computed here from the measurements, the
targets' met / missed included.

    python3 report.py RESULTS.json [--doc docs/benchmarks.md] [--svg docs/benchmarks.svg]

Overhead is a row's time per unit minus the floor's (the bare Rust client sending the same
requests) in the same repeat and scenario; p95 overhead is the row's p95 minus the floor's.
Each figure is the median over the repeats.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

ABOUT = {
    "weather": "two parallel tool calls, then the answer (2 model calls)",
    "chain-5": "five turns of one tool call each, then the answer (6 model calls)",
    "history-200": "weather behind 200 prior messages (~45 KB per request)",
    "stream": "weather, the model's answers read as server-sent events",
    "concurrent-100": "100 weather runs at once in one process; a unit is all 100 (200 model calls)",
    "suspend": "an inline suspension (wait_for answers, the tool re-runs) and a durable halt plus "
               "its resume: two runs, 4 model calls",
}
# What each binding is held against (the targets): its own language's raw loop. The
# engine's language is Rust, whose raw loop is the floor itself.
RAW = {"rust": "floor", "python": "python-raw", "node": "node-raw", "go": "go-raw"}
# Why missed targets are missed: what profiles showed and what was tried, written by hand.
LEFT = HERE / "left.md"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Data:
    def __init__(self, res: dict):
        self.res = res
        self.meta = res["meta"]
        self.rows = res["rows"]
        self.scenarios = self.meta["scenarios"]
        self.by = {}  # (id, scenario) -> [result per repeat]
        for r in res["results"]:
            self.by.setdefault((r["id"], r["scenario"]), []).append(r)
        self.na = {(n["id"], n["scenario"]): n["reason"] for n in res["na"]}

    def floor(self, scenario: str, rep: int):
        return next((r for r in self.by.get(("floor", scenario), []) if r["repeat"] == rep), None)

    def stat(self, rid: str, scenario: str, key: str):
        """Median over repeats of a per-unit figure: p50, p95 (ms), overhead p50/p95, cpu, init, rss."""
        vals = []
        for r in self.by.get((rid, scenario), []):
            f = self.floor(scenario, r["repeat"])
            pr = r.get("per_run_ms") or {}
            if key in ("p50", "p95"):
                vals.append(pr.get(key))
            elif key in ("ovh50", "ovh95") and f:
                q = "p50" if key == "ovh50" else "p95"
                vals.append(pr[q] - f["per_run_ms"][q])
            elif key == "cpu":
                vals.append(r.get("cpu_ms_per_run"))
            elif key == "init":
                vals.append(r.get("init_ms"))
            elif key == "rss":
                vals.append(r.get("peak_rss_mb"))
            elif key == "calls":
                vals.append(r.get("turns_per_run"))
        return median(vals)

    def per_message_us(self, rid: str, scenario: str, overhead: bool = True):
        """µs per prior message per model call: (history-N − weather) over N × calls."""
        n = int(scenario.split("-")[1])
        key = "ovh50" if overhead else "p50"
        h, w, calls = self.stat(rid, scenario, key), self.stat(rid, "weather", key), self.stat(rid, scenario, "calls")
        if h is None or w is None or not calls:
            return None
        return (h - w) * 1e3 / (n * calls)

    def label(self, rid):
        return next(r["label"] for r in self.rows if r["id"] == rid)


def f(x, nd=3):
    return "–" if x is None else f"{x:.{nd}f}"


def cell_na(d: Data, rid: str, scenario: str) -> str | None:
    if (rid, scenario) in d.na:
        # The reason's first clause here; the whole of it under "Not applicable".
        return f"n/a: {d.na[(rid, scenario)].split(':')[0]}"
    if not d.by.get((rid, scenario)):
        fail = next((x for x in d.res["failures"] if x["id"] == rid and x["scenario"] == scenario), None)
        return "failed: " + fail["error"][:120].replace("|", "/").replace("\n", " ") if fail else "–"
    return None


def bindings(d: Data):
    """(row id, its raw loop's id) for each binding row of the results."""
    for lang, raw in RAW.items():
        rid = next((r["id"] for r in d.rows if r["kind"] == "binding" and r["lang"] == lang), None)
        if rid is not None:
            yield rid, raw


def targets(d: Data) -> tuple[list[str], int, int]:
    """The issue's targets, per binding row: lines of markdown, and the met / missed counts."""
    lines, met, missed = [], 0, 0

    def verdict(ok):
        nonlocal met, missed
        if ok is None:
            return "–"
        met, missed = met + ok, missed + (not ok)
        return "met" if ok else "**missed**"

    lines += ["Overhead p50 at most 0.5x the raw loop's of the binding's own language, on every scenario "
              "(for the Rust engine, whose raw loop is the floor: overhead at most 0.5x the floor's time per unit).", "",
              "| binding | scenario | overhead p50 ms | raw loop's ms | ratio | target |", "|---|---|---|---|---|---|"]
    for rid, raw in bindings(d):
        for sc in d.scenarios:
            ours = d.stat(rid, sc, "ovh50")
            ref = d.stat("floor", sc, "p50") if raw == "floor" else d.stat(raw, sc, "ovh50")
            na = cell_na(d, rid, sc) or (cell_na(d, raw, sc) if raw != "floor" else None)
            if na or ours is None or ref is None:
                lines.append(f"| {d.label(rid)} | {sc} | {f(ours)} | {f(ref)} | – | – ({na or 'no data'}) |")
                continue
            ratio = ours / ref if ref > 0 else None
            ok = None if ratio is None else ratio <= 0.5
            lines.append(f"| {d.label(rid)} | {sc} | {f(ours)} | {f(ref)} | {f(ratio, 2)}x | {verdict(ok)} |")
    hist = [s for s in d.scenarios if s.startswith("history-")]
    if hist and "weather" in d.scenarios:
        sc = hist[0]
        lines += ["", f"Cost per prior message per model call ({sc} against weather) at most the raw loop's (for the "
                  "engine: its added cost at most the floor's own cost per message).", "",
                  "| binding | µs per prior message per call | raw loop's | target |", "|---|---|---|---|"]
        for rid, raw in bindings(d):
            ours = d.per_message_us(rid, sc)
            ref = d.per_message_us("floor", sc, overhead=False) if raw == "floor" else d.per_message_us(raw, sc)
            ok = None if ours is None or ref is None else ours <= max(ref, 0.0)
            lines.append(f"| {d.label(rid)} | {f(ours, 2)} | {f(ref, 2)} | {verdict(ok)} |")
    node = next((r["id"] for r in d.rows if r["kind"] == "binding" and r["lang"] == "node"), None)
    if node:
        lines += ["", "Node peak RSS within 10 MB of the Node raw loop's, per scenario (each scenario is its own process).",
                  "", "| scenario | binding MB | raw loop MB | difference | target |", "|---|---|---|---|---|"]
        for sc in d.scenarios:
            a, b = d.stat(node, sc, "rss"), d.stat("node-raw", sc, "rss")
            if a is None or b is None:
                lines.append(f"| {sc} | {f(a, 1)} | {f(b, 1)} | – | – |")
                continue
            lines.append(f"| {sc} | {f(a, 1)} | {f(b, 1)} | {a - b:+.1f} | {verdict(a - b <= 10.0)} |")
    return lines, met, missed


def doc(d: Data) -> str:
    m, mach = d.meta, d.meta["machine"]
    ids = [r["id"] for r in d.rows]
    out = ["# Benchmarks: the engine, its bindings and their peers", "",
           "Generated by `make bench-peers` (bench/peers/run.py measures, bench/peers/report.py writes this page "
           "and benchmarks.svg); do not edit by hand.", ""]
    if m["quick"]:
        out += ["> **Quick run** (`BENCH_QUICK=1`): a few units per row and one repeat, to prove the pipeline. "
                "These figures are not measurements; the full run replaces them.", ""]
    busy = m.get("busy_pct_between") or []
    out += [f"- Date: {m['date']}; {m['repeats']} repeat(s); took {m.get('duration_s', 0) / 60:.1f} min.",
            f"- Machine: {mach['cpu']}, {mach['cores']} cores, {mach['memory_gb']} GB, Linux {mach['kernel']}; "
            f"{mach['python']}, Node {mach['node']}, {mach['go']}, {mach['rustc']}.",
            f"- Machine busy before each scenario: {min(busy, default=0):.0f}–{max(busy, default=0):.0f} % "
            f"(before the run: {f(m.get('busy_pct_before'), 0)} %). Other load makes every row slower; "
            "compare rows of one run.", "",
            "Every row runs the same scenario against the same mock model (bench/peers/mock: deterministic, "
            "answers in microseconds), in its own process, interleaved in shuffled batches with every other row. "
            "**Overhead** is a row's time per unit minus the floor's, the bare Rust keep-alive client sending the "
            "same requests (`floor: rust raw client`), so it is what the library adds to a run. The raw loops are "
            "the agent loop written by hand in each language with its standard library, the least a loop there "
            "can cost. Each figure is the median over the repeats; p95 overhead is the row's p95 minus the floor's.",
            "", "| scenario | one unit |", "|---|---|"]
    out += [f"| {sc} | {ABOUT.get(sc, sc)} |" for sc in d.scenarios]
    out += ["", "## Overhead p50 per unit (ms)", "", "![overhead per scenario](benchmarks.svg)", "",
            "| row | " + " | ".join(d.scenarios) + " |", "|---|" + "---|" * len(d.scenarios)]
    for rid in ids:
        if rid == "floor":
            out.append("| " + d.label(rid) + " (time per unit) | "
                       + " | ".join(f(d.stat(rid, sc, "p50")) for sc in d.scenarios) + " |")
            continue
        cells = [cell_na(d, rid, sc) or f(d.stat(rid, sc, "ovh50")) for sc in d.scenarios]
        cells = ["n/a" if c.startswith("n/a") else c for c in cells]
        out.append(f"| {d.label(rid)} | " + " | ".join(cells) + " |")
    out += ["", "## Per scenario", ""]
    for sc in d.scenarios:
        out += [f"**{sc}**: {ABOUT.get(sc, sc)}", "",
                "| row | time p50 ms | overhead p50 ms | overhead p95 ms | overhead per model call µs | CPU ms per unit |",
                "|---|---|---|---|---|---|"]
        for rid in ids:
            na = cell_na(d, rid, sc)
            if na:
                out.append(f"| {d.label(rid)} | {na} | | | | |")
                continue
            o50, calls = d.stat(rid, sc, "ovh50"), d.stat(rid, sc, "calls")
            per_call = o50 * 1e3 / calls if o50 is not None and calls else None
            out.append(f"| {d.label(rid)} | {f(d.stat(rid, sc, 'p50'))} | {f(o50)} | {f(d.stat(rid, sc, 'ovh95'))} | "
                       f"{f(per_call, 1)} | {f(d.stat(rid, sc, 'cpu'))} |")
        out.append("")
    out += ["## Start-up and memory", "",
            "Init is importing the library and building its client and tools, in the runner process; peak RSS is "
            "the process's high-water mark at the end of the scenario.", "",
            "| row | init ms | peak RSS MB, weather | peak RSS MB, concurrent-100 |", "|---|---|---|---|"]
    conc = next((s for s in d.scenarios if s.startswith("concurrent-")), None)
    for rid in ids:
        out.append(f"| {d.label(rid)} | {f(d.stat(rid, 'weather', 'init'), 1)} | {f(d.stat(rid, 'weather', 'rss'), 1)} | "
                   f"{f(d.stat(rid, conc, 'rss'), 1) if conc else '–'} |")
    hist = [s for s in d.scenarios if s.startswith("history-")]
    if hist and "weather" in d.scenarios:
        sc = hist[0]
        out += ["", "## Transcript growth", "",
                f"µs per prior message per model call: ({sc} overhead − weather overhead) ÷ ({sc.split('-')[1]} "
                "messages × model calls). The floor's row is its own time, not an overhead.", "",
                "| row | µs per prior message per model call |", "|---|---|"]
        for rid in ids:
            out.append(f"| {d.label(rid)} | {f(d.per_message_us(rid, sc, overhead=rid != 'floor'), 2)} |")
    tl, met, missed = targets(d)
    out += ["", "## Targets", "", f"{met} met, {missed} missed (computed from the figures above).", ""] + tl
    if missed and LEFT.exists():
        out += ["", "## What is left", "", LEFT.read_text().strip()]
    na = sorted(d.res["na"], key=lambda n: (n["id"], n["scenario"]))
    seen = set()
    out += ["", "## Not applicable", ""]
    for n in na:
        if (n["id"], n["scenario"]) not in seen:
            seen.add((n["id"], n["scenario"]))
            out.append(f"- {d.label(n['id'])}, {n['scenario']}: {n['reason']}.")
    if d.res["missing"] or d.res["failures"]:
        out += ["", "## Missing and failed rows", ""]
        out += [f"- {x['id']}: not installed: {x['reason']}" for x in d.res["missing"]]
        out += [f"- {x['id']}, {x['scenario']} (repeat {x['repeat'] + 1}): {x['error'][:300]}" for x in d.res["failures"]]
    out += ["", "## Running it", "",
            "`make bench-peers` installs what is missing (bench/peers/setup.sh: release builds of the engine and "
            "the bindings, the peers pinned from PyPI by hash and from npm by lock file, all under "
            "`$CARGO_TARGET_DIR/bench-peers`), runs every row, and rewrites this page; a full run takes about 14 "
            "minutes once built. `BENCH_QUICK=1` proves the pipeline in about a minute; "
            "`BENCH_SCENARIOS=weather,suspend` and `BENCH_ONLY=rust,python,python-raw` "
            "narrow it. On a loaded machine every row is slower and the spread grows: repeat, and compare rows "
            "within one run.", ""]
    return "\n".join(out)


COLORS = {"binding": "#2563eb", "baseline": "#6b7280", "peer": "#ea580c"}


def svg(d: Data) -> str:
    """Small multiples: per scenario, each row's overhead p50 as a bar on a log scale."""
    rows = [r for r in d.rows if r["id"] != "floor"]
    cols, pw, bar, label_w = 2, 490, 14, 225
    ph = 40 + len(rows) * (bar + 4)
    nrows = math.ceil(len(d.scenarios) / cols)
    width, height = cols * pw + 20, nrows * (ph + 20) + 60
    vals = [d.stat(r["id"], sc, "ovh50") for r in rows for sc in d.scenarios]
    pos = [v for v in vals if v and v > 0]
    lo = 10 ** math.floor(math.log10(min(pos))) if pos else 0.001
    hi = 10 ** math.ceil(math.log10(max(pos))) if pos else 1.0
    span = math.log10(hi) - math.log10(lo) or 1.0
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;")  # noqa: E731
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="10" y="20" font-size="14">Overhead over the bare Rust client, p50 ms per unit (log scale)'
         f'{" — QUICK RUN, not measurements" if d.meta["quick"] else ""}</text>']
    for i, k in enumerate(("binding", "baseline", "peer")):
        o.append(f'<rect x="{10 + i * 110}" y="30" width="10" height="10" fill="{COLORS[k]}"/>'
                 f'<text x="{24 + i * 110}" y="39">{"raw loop" if k == "baseline" else k}</text>')
    for n, sc in enumerate(d.scenarios):
        x0, y0 = 10 + (n % cols) * pw, 60 + (n // cols) * (ph + 20)
        plot_w = pw - label_w - 60
        o.append(f'<text x="{x0}" y="{y0 + 12}" font-size="12" font-weight="bold">{esc(sc)}</text>')
        decades = range(int(math.log10(lo)), int(math.log10(hi)) + 1)
        for e in decades:
            gx = x0 + label_w + plot_w * (e - math.log10(lo)) / span
            o.append(f'<line x1="{gx:.1f}" y1="{y0 + 20}" x2="{gx:.1f}" y2="{y0 + ph - 6}" stroke="#ddd"/>')
            if len(decades) <= 6 or (e - decades[0]) % 2 == 0:  # every other label when they would touch
                tick = f"{10 ** (e - 3)}k" if e >= 3 else f"{10.0 ** e:g}"
                o.append(f'<text x="{gx:.1f}" y="{y0 + ph + 6}" text-anchor="middle" fill="#555">{tick}</text>')
        for j, r in enumerate(rows):
            y = y0 + 22 + j * (bar + 4)
            v = d.stat(r["id"], sc, "ovh50")
            o.append(f'<text x="{x0 + label_w - 6}" y="{y + bar - 3}" text-anchor="end">{esc(r["label"])}</text>')
            if v is None:
                o.append(f'<text x="{x0 + label_w + 4}" y="{y + bar - 3}" fill="#999">n/a</text>')
                continue
            w = plot_w * (math.log10(max(v, lo)) - math.log10(lo)) / span
            shown = f"{v:.0f}" if v >= 100 else f"{v:.3g}"
            o.append(f'<rect x="{x0 + label_w}" y="{y}" width="{max(w, 1):.1f}" height="{bar}" fill="{COLORS[r["kind"]]}"/>'
                     f'<text x="{x0 + label_w + max(w, 1) + 4:.1f}" y="{y + bar - 3}">{shown}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--doc", default=str(REPO / "docs" / "benchmarks.md"))
    ap.add_argument("--svg", default=str(REPO / "docs" / "benchmarks.svg"))
    a = ap.parse_args()
    d = Data(json.loads(Path(a.results).read_text()))
    Path(a.doc).write_text(doc(d))
    Path(a.svg).write_text(svg(d))
    print(f"wrote {a.doc} and {a.svg}")


if __name__ == "__main__":
    main()
