"""Layouts of the HTML graph view by Graphviz `dot -Tjson`, when it is installed: the page's
computation models (graph_view.comp_model) get node centres and edge splines, first every
computation collapsed, then those with nodes opened at load with the frames' sizes; one time budget
for all runs.  What dot does not lay out, the page lays out itself with dagre."""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from typing import Optional

DOT_MAX_NODES = 2500  # bigger computations are left to the browser
DOT_BUDGET_S = 90.0  # all dot runs of one page together


def _dot_text(name: str, cm: dict, sizes: dict) -> str:
    lines = [f'digraph "{name}" {{',
             "graph [rankdir=TB, nodesep=0.3, ranksep=0.5, splines=spline, outputorder=edgesfirst];",
             'node [shape=box, fixedsize=true, label=""];', "edge [arrowhead=none];"]
    params, root = [], None
    for k, n in enumerate(cm["n"]):
        w, h = sizes.get(k) or (n["w"], n["h"])
        lines.append(f"{k} [width={w / 72:.4f}, height={h / 72:.4f}];")
        if n["o"] == "parameter" and not n.get("dup"):
            params.append(str(k))
        if n.get("r"):
            root = str(k)
    if params:
        lines.append("{rank=source; " + "; ".join(params) + "}")
    if root is not None and len(cm["n"]) > 1:
        lines.append("{rank=sink; " + root + "}")
    for j, e in enumerate(cm["e"]):
        if len(e) < 6:  # far edges are left out
            lines.append(f'{e[0]} -> {e[1]} [id="e{j}"{", weight=0" if e[3] else ""}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _parse_dot_json(doc: dict, cm: dict, sizes: dict) -> dict:
    llx, lly, urx, ury = (float(v) for v in doc["bb"].split(","))
    n = len(cm["n"])
    xs, ys = [0.0] * n, [0.0] * n
    for obj in doc.get("objects", ()):
        pos = obj.get("pos")
        name = obj.get("name", "")
        if pos and name.isdigit() and int(name) < n:
            x, y = pos.split(",")
            xs[int(name)] = round(float(x) - llx, 1)
            ys[int(name)] = round(ury - float(y), 1)
    paths = [[] for _ in cm["e"]]
    for e in doc.get("edges", ()):
        eid = e.get("id", "")
        if not eid.startswith("e") or "pos" not in e:
            continue
        pts = []
        for tok in e["pos"].split():
            if tok.startswith(("e,", "s,")):
                continue
            x, y = tok.split(",")
            pts += [round(float(x) - llx, 1), round(ury - float(y), 1)]
        paths[int(eid[1:])] = pts
    return {"x": xs, "y": ys, "W": round(urx - llx, 1), "H": round(ury - lly, 1), "p": paths, "b": 1,
            "engine": "dot", "open": sorted(sizes), "sz": {str(k): [round(w, 1), round(h, 1)] for k, (w, h) in sizes.items()}}


class _Dot:
    """Graphviz dot runs sharing one time budget; `layout(jobs)` lays out [(model, sizes)] in batches."""

    def __init__(self, budget_s: float = DOT_BUDGET_S, max_nodes: int = DOT_MAX_NODES):
        self.exe = shutil.which("dot")
        self.t0 = time.monotonic()
        self.budget_s = budget_s
        self.max_nodes = max_nodes
        self.runs = 0
        self.out_of_time = False

    def left(self) -> float:
        return self.budget_s - (time.monotonic() - self.t0)

    def layout(self, jobs: list) -> list:
        """jobs: [(computation model, {node index: (w, h)} sizes of opened nodes)]; a layout or None each."""
        out = [None] * len(jobs)
        if self.exe is None:
            return out
        batch = []
        size = 0
        for k, (cm, sizes) in enumerate(jobs):
            if not cm["n"] or len(cm["n"]) > self.max_nodes:
                continue
            batch.append(k)
            size += len(cm["n"])
            if size >= 400:
                self._run(jobs, batch, out)
                batch, size = [], 0
        if batch:
            self._run(jobs, batch, out)
        return out

    def _run(self, jobs, batch, out):
        left = self.left()
        if left <= 0.5 or self.out_of_time:
            self.out_of_time = True
            return
        text = "".join(_dot_text(f"g{k}", jobs[k][0], jobs[k][1]) for k in batch)
        self.runs += 1
        try:
            proc = subprocess.run([self.exe, "-Tjson"], input=text.encode(), capture_output=True, timeout=left)
        except subprocess.TimeoutExpired:
            self.out_of_time = True
            return
        except OSError:
            return
        if proc.returncode != 0:
            return  # left to the browser
        text = proc.stdout.decode("utf-8", "replace")
        dec, pos = json.JSONDecoder(), 0
        for _ in batch:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            doc, pos = dec.raw_decode(text, pos)
            name = doc.get("name", "")
            if name.startswith("g") and name[1:].isdigit():
                k = int(name[1:])
                cm, sizes = jobs[k]
                out[k] = _parse_dot_json(doc, cm, sizes)


# Frame geometry: the same numbers as Frame.measure in graph_view.js
_PAD, _HEAD, _CAP = 12, 26, 16


def frame_size(node: dict, parts: list) -> tuple:
    """(W, H) of an opened node's frame holding `parts`: [(caption, (w, h) of the drawn computation)]."""
    x, h = _PAD, 0.0
    for cap, (pw, ph) in parts:
        w = max(len(cap) * 6.6 + 8, pw)
        h = max(h, ph)
        x += w + 2 * _PAD
    title = f"\u25be {node['nm']} · {node['l'][0][0]} → {node['sh']}"
    return max(x - _PAD, len(title) * 7 + 24), _HEAD + _CAP + h + _PAD


def opened(cm: dict, mode: Optional[str]) -> list:
    """Indices of the nodes the page opens at load in this computation (mode fusion or all)."""
    if not mode:
        return []
    return [k for k, n in enumerate(cm["n"]) if n.get("c") and not n.get("dup")
            and (mode == "all" or n["o"] == "fusion")]


def lay_out(models: dict, order: list, mode: Optional[str], budget_s: float = DOT_BUDGET_S) -> dict:
    """Graphviz layouts: every computation collapsed, then, for the opened-at-load state, the
    computations with opened nodes again with those nodes as big as their frames (children first)."""
    dot = _Dot(budget_s)
    base = dot.layout([(models[c], {}) for c in order])
    for c, L in zip(order, base):
        models[c]["L"] = [L] if L is not None else []
    expanded = 0
    if mode and dot.exe is not None:
        # Post-order over the computations opened at load, from the top one.
        post, state, top = [], {}, order[0]

        def visit(c, stack):
            if c in state or c in stack or c not in models:
                return
            for k in opened(models[c], mode):
                for _, cc in models[c]["n"][k]["c"]:
                    visit(cc, stack | {c})
            state[c] = 1
            post.append(c)

        visit(top, frozenset())
        size = {}  # computation -> (W, H) as drawn at load
        level = {}
        for c in post:
            ks = opened(models[c], mode)
            level[c] = 1 + max([level[cc] for k in ks for _, cc in models[c]["n"][k]["c"] if cc in level],
                               default=-1)
        for lv in range(max(level.values(), default=-1) + 1):
            todo = []
            for c in post:
                if level[c] != lv:
                    continue
                ks = opened(models[c], mode)
                if not ks:
                    L = models[c]["L"][0] if models[c]["L"] else None
                    size[c] = (L["W"], L["H"]) if L else None
                    continue
                sizes = {}
                for k in ks:
                    n = models[c]["n"][k]
                    parts = [(f"{cap}: {cc}", size.get(cc) or (n["w"], n["h"])) for cap, cc in n["c"]]
                    sizes[k] = frame_size(n, parts)
                todo.append((c, sizes))
            got = dot.layout([(models[c], sizes) for c, sizes in todo])
            for (c, sizes), L in zip(todo, got):
                if L is not None:
                    models[c]["L"].append(L)
                    expanded += 1
                    size[c] = (L["W"], L["H"])
                else:
                    size[c] = None
    done = sum(1 for c in order if models[c]["L"])
    return {"laid_out": done, "expanded": expanded, "runs": dot.runs, "seconds": round(time.monotonic() - dot.t0, 2),
            "left_to_browser": len(order) - done}
