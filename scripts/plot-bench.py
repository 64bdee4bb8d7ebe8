#!/usr/bin/env python3
"""Plot µs per LL iteration against the exponent, ours (every version in bench/gpu-bench.csv
measured on an H200, the GPU of the anchors; each arithmetic's newest version bold, in a colour
of its own; an arithmetic with no H200 row shows its newest row of another card, named in the
legend), the peers (bench/anchors.csv)
and the floor that the field arithmetic sets (bench/floor.csv, gpu-selftest field-rate),
log-log, as a dependency-free SVG.

Usage: scripts/plot-bench.py [OUT.svg]   (default bench/plot.svg)
"""
import csv, math, os, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
W, H, L, R, T, B = 780, 480, 70, 220, 30, 50
COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#ff7f0e", "#17becf"]


def rows(name):
    with open(os.path.join(ROOT, "bench", name)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench", "plot.svg")
    series = {}
    for r in rows("anchors.csv"):
        for k, v in r.items():
            if k != "exponent" and v:
                series.setdefault(k, []).append((int(r["exponent"]), float(v)))
    # (arithmetic, version, gpu) -> points, in the file's order (newest last): every H200 row;
    # an arithmetic never measured on an H200 shows its newest version on another card, named
    # in the legend (compare it with that card's rows in RESULTS.md, not with the peers' H200).
    ours = {}
    table = rows("gpu-bench.csv")
    on_h200 = {r.get("arith") or "goldilocks" for r in table if r["gpu"] == "H200"}
    for r in table:
        arith = r.get("arith") or "goldilocks"
        if r["gpu"] != "H200" and arith in on_h200:
            continue
        key = (arith, r["version"], r["gpu"])
        ours.setdefault(key, []).append((int(r["exponent"]), float(r["us_per_iter"])))
    newest = {k[0]: k for k in ours}  # the last version of each arithmetic
    ours = {k: s for k, s in ours.items() if k[2] == "H200" or k == newest[k[0]]}
    floors = {}
    for r in rows("floor.csv"):
        for k in ("this_plan", "shifts_free"):
            floors.setdefault(k, []).append((int(r["exponent"]), float(r[k])))
    pts = [p for s in list(series.values()) + list(ours.values()) + list(floors.values()) for p in s]
    x0, x1 = math.log10(min(p[0] for p in pts)) - 0.1, math.log10(max(p[0] for p in pts)) + 0.1
    y0, y1 = math.floor(math.log10(min(p[1] for p in pts))), math.ceil(math.log10(max(p[1] for p in pts)))
    sx = lambda x: L + (math.log10(x) - x0) / (x1 - x0) * (W - L - R)
    sy = lambda y: H - B - (math.log10(y) - y0) / (y1 - y0) * (H - T - B)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    for e in range(y0, y1 + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if 10 ** y0 <= v <= 10 ** y1:
                y = sy(v)
                svg.append(f'<line x1="{L}" x2="{W-R}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
                svg.append(f'<text x="{L-6}" y="{y+4:.1f}" text-anchor="end">{v:g}</text>')
    for x in sorted({p[0] for p in pts}):
        svg.append(f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{T}" y2="{H-B}" stroke="#eee"/>')
        svg.append(f'<text x="{sx(x):.1f}" y="{H-B+16}" text-anchor="middle" font-size="10">{x/1e6:.2f}M</text>')
    svg.append(f'<text x="{(L+W-R)/2}" y="{H-10}" text-anchor="middle">exponent p (log scale)</text>')
    svg.append(f'<text x="16" y="{(T+H-B)/2}" text-anchor="middle" transform="rotate(-90 16 {(T+H-B)/2})">µs per LL iteration, H200 unless named (log scale)</text>')
    legend = []
    def line(name, s, color, width, dash=""):
        s = sorted(s)
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(s))
        svg.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="{width}" {dash}/>')
        for x, y in s:
            svg.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{width+1}" fill="{color}"/>')
        legend.append((name, color, width, dash))
    for i, (name, s) in enumerate(series.items()):
        line(name, s, COLORS[(i + 1) % len(COLORS)], 1.5, 'stroke-dasharray="5,3"')
    bold = {"goldilocks": (COLORS[0], "#e8a0a0"), "m61m31": ("#000000", "#aaaaaa"), "fp64": (COLORS[5], "#ffc890")}
    name = lambda k: f"mersenne-cert {k[0]} {k[1]}" + ("" if k[2] == "H200" else f" ({k[2]})")
    for key, s in ours.items():
        if key not in newest.values():
            line(name(key), s, bold.get(key[0], COLORS[0:2])[1], 1)
    for key in newest.values():
        line(name(key), ours[key], bold.get(key[0], COLORS[0:2])[0], 3)
    line("floor: our plan's arithmetic", floors["this_plan"], "#777", 1, 'stroke-dasharray="2,2"')
    line("bound: any plan, shifts free", floors["shifts_free"], "#bbb", 1, 'stroke-dasharray="2,2"')
    for i, (name, color, width, dash) in enumerate(legend):
        y = T + 10 + 18 * i
        svg.append(f'<line x1="{W-R+10}" x2="{W-R+34}" y1="{y}" y2="{y}" stroke="{color}" stroke-width="{width}" {dash}/>')
        svg.append(f'<text x="{W-R+40}" y="{y+4}" font-size="11">{name}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
