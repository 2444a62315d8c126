"""`hlo diff --format html`: the two modules' graphs side by side, with added (green), removed (red)
and changed (amber) instructions coloured and matched pairs linked (select one, its match is selected
and centred on the other side), and the text diff beside them.  The matching is diff.py's; this is
only its picture.  One self-contained page (inline data, CSS and JS, nothing fetched)."""
from __future__ import annotations

import html

from . import ir
from .diff_render import instruction_lines
from .graph_layout import lay_out
from .graph_model import build
from .graph_view import asset, comp_model, reachable, script_json, scripts
from .sources import SourceLocations

__all__ = ["diff_to_html"]

_CSS = """
#panes{position:fixed;top:35px;left:0;bottom:0;right:34%}
.pane{top:0;bottom:0;width:50%;border-right:1px solid #ccc}
#paneA{left:0} #paneB{left:50%}
.ph{position:absolute;top:0;left:0;right:0;z-index:2;background:rgba(255,255,255,.92);font-size:12px;
 padding:3px 8px;border-bottom:1px solid #ddd;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.pane svg.gsvg{position:absolute;top:22px;left:0;height:calc(100% - 22px)}
#text{position:fixed;top:35px;right:0;bottom:0;width:34%;overflow:auto;background:#fff;border-left:1px solid #ccc;
 padding:4px 10px;box-sizing:border-box;font-size:13px}
#text pre{font:11.5px/1.4 "DejaVu Sans Mono",Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-all;
 background:#f7f7f7;padding:.4em;margin:.3em 0}
#text pre span{cursor:pointer}
#text table{border-collapse:collapse;margin:.4em 0}#text td,#text th{border:1px solid #ccc;padding:.1em .5em;text-align:right}
#text details{margin:.4em 0}#text summary{cursor:pointer;font-weight:600}
.ad{color:#1a7f37}.rm{color:#cf222e}.ch{color:#9a6700}.hunk{color:#0550ae}.mv{color:#6e7781}
.verdict{font-weight:bold}.verdict.same{color:#1a7f37}.verdict.diff{color:#cf222e}
#legend span{padding:0 5px;border-radius:3px;font-size:12px;margin-left:3px}
#legend .ad{background:#c9f0d1}#legend .rm{background:#fbd3d0}#legend .ch{background:#fdf0c2}
"""

_JS = r"""
window.hloDiffPage = function () {
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById('diff-data').textContent);
  var info = document.getElementById('info'), H = window.HloGraph, linking = false;
  var other = {};
  function partner(side, comp, name) {
    var p = D.pairs[side][comp];
    if (!p) return null;
    return [p.comp, p.ins[name]];
  }
  function onselect(v, inst, i) {
    info.innerHTML = H.infoHtml(v, inst, i);
    info.style.display = 'block';
    if (linking) return;
    var w = other[v.V.id], pt = partner(v.V.id, inst.name, inst.C.n[i].nm);
    document.querySelectorAll('.node.linked').forEach(function (g) { g.classList.remove('linked'); });
    if (pt && pt[1]) {
      linking = true;
      if (w.selectName(pt[0], pt[1], true) && w.sel) w.sel.classList.add('linked');
      linking = false;
      info.innerHTML += '<div>matched with <b>%' + pt[1] + '</b> in ' + (v.V.id === 'A' ? 'B' : 'A') + '</div>';
    } else if (inst.C.n[i].ds === 'add' || inst.C.n[i].ds === 'rm') {
      info.innerHTML += '<div>no match in ' + (v.V.id === 'A' ? 'B' : 'A') + '</div>';
    }
    var hash = '#' + v.V.id + ':' + (inst.name === v.top ? '' : inst.name + '/') + inst.C.n[i].nm;
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }
  var va = new H.Viewer(document.getElementById('paneA'), D.A, {onselect: onselect});
  var vb = new H.Viewer(document.getElementById('paneB'), D.B, {onselect: onselect});
  other.A = vb; other.B = va;
  window.hloViewers = [va, vb];
  info.addEventListener('click', function (ev) { if (ev.target.classList.contains('x')) info.style.display = 'none'; });
  new H.Finder(document.getElementById('find'), [va, vb], document.getElementById('found'));
  var pick = document.getElementById('pick');
  function show(k) {
    var c = D.comps[k];
    if (c[0]) va.setTop(c[0]); if (c[1]) vb.setTop(c[1]);
    document.getElementById('nameA').textContent = c[0] || '(none)';
    document.getElementById('nameB').textContent = c[1] || '(none)';
  }
  pick.addEventListener('change', function () { show(+pick.value); });
  document.getElementById('fit').onclick = function () { va.fit(); vb.fit(); };
  document.getElementById('text').addEventListener('click', function (ev) {
    var s = ev.target.closest('span[data-n]');
    if (!s) return;
    var side = s.getAttribute('data-s'), comp = s.getAttribute('data-c');
    (side === 'B' ? vb : va).selectName(comp, s.getAttribute('data-n'), true);
  });
  function fromHash() {
    var h = decodeURIComponent(location.hash.replace(/^#/, '')), m = /^([AB]):(.*)$/.exec(h);
    if (!m) return;
    var v = m[1] === 'B' ? vb : va, parts = m[2].split('/');
    if (parts.length > 1) v.selectName(parts[0], parts[1], true); else v.selectName(v.top, parts[0], true);
  }
  window.addEventListener('hashchange', fromHash);
  window.addEventListener('resize', function () { if (!va.touched) va.fit(); if (!vb.touched) vb.fit(); });
  fromHash();
  document.body.setAttribute('data-load-ms', Math.round(performance.now() - t0));
  document.body.setAttribute('data-ready', '1');
};
"""


def _e(s) -> str:
    return html.escape(str(s), quote=True)


def _statuses(result) -> tuple:
    """Per side, {computation: {instruction: (status, [change lines])}}; and the matched pairs."""
    sa: dict = {}
    sb: dict = {}
    pairs = {"A": {}, "B": {}}
    for c in result.computations:
        if c.a is not None and c.b is None:
            sa[c.a.name] = {i.name: ("rm", None) for i in c.a.instructions}
            continue
        if c.b is not None and c.a is None:
            sb[c.b.name] = {i.name: ("add", None) for i in c.b.instructions}
            continue
        a, b = sa.setdefault(c.a.name, {}), sb.setdefault(c.b.name, {})
        for i in c.removed:
            a[i.name] = ("rm", None)
        for i in c.added:
            b[i.name] = ("add", None)
        for x in c.changed:
            lines = [ch.text() for ch in x.changes]
            a[x.a.name] = ("ch", lines)
            b[x.b.name] = ("ch", lines)
        ab = dict(c.pairs)
        pairs["A"][c.a.name] = {"comp": c.b.name, "ins": ab}
        pairs["B"][c.b.name] = {"comp": c.a.name, "ins": {y: x for x, y in ab.items()}}
    return sa, sb, pairs


def _side_model(m: ir.Module, status: dict, view_id: str, engine: str, budget_s: float) -> dict:
    comps = {c.name: c for c in m.computations}
    sources = SourceLocations(m)
    order = reachable(m, m.entry)
    order += [c.name for c in m.computations if c.name not in set(order)]
    models = {c: comp_model(build(m, c, max_nodes=None), comps, sources, status.get(c)) for c in order}
    stats = {"laid_out": 0}
    if engine in ("auto", "dot"):
        stats = lay_out(models, order, None, budget_s)
    else:
        for cm in models.values():
            cm["L"] = []
    return {"id": view_id, "top": m.entry.name, "comps": models, "expand": None, "dot": stats}


def diff_to_html(result, *, unified: bool = False, context: int = 3, engine: str = "auto",
                 budget_s: float = 60.0) -> str:
    sa, sb, pairs = _statuses(result)
    A = _side_model(result.a, sa, "A", engine, budget_s / 2)
    B = _side_model(result.b, sb, "B", engine, budget_s / 2)
    # The computations to pick from: changed pairs first (the entry first among them), then the rest.
    choices = []
    for c in result.computations:
        a, b = (c.a.name if c.a else None), (c.b.name if c.b else None)
        rank = (0 if (c.a is not None and c.a.is_entry) else 1) if c.status != "same" else 2
        choices.append((rank, len(choices), a, b, c.status))
    choices.sort()
    default = next((k for k, ch in enumerate(choices) if ch[2] == result.a.entry.name), 0)
    A["top"] = choices[default][2] or A["top"]
    B["top"] = choices[default][3] or B["top"]
    data = {"A": A, "B": B, "pairs": pairs, "comps": [[ch[2], ch[3]] for ch in choices]}
    s = result.summary()
    opts = "".join(f'<option value="{k}"{" selected" if k == default else ""}>{_e(ch[4])}: '
                   f'{_e(ch[2] or "—")}{"" if ch[2] == ch[3] else " → " + _e(ch[3] or "—")}</option>'
                   for k, ch in enumerate(choices))
    verdict = "same" if result.same else "different"
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>hlo diff: {_e(result.a_name)} vs {_e(result.b_name)}</title>",
        f"<style>{asset('graph_view.css')}{_CSS}</style></head>",
        '<body data-ready="0">',
        f'<div id="bar"><b>hlo diff</b><span class="verdict {"same" if result.same else "diff"}">{verdict}</span>'
        f'<select id="pick" title="computation pair">{opts}</select>'
        '<span id="legend"><span class="ad">added</span><span class="rm">removed</span>'
        '<span class="ch">changed</span></span><span class="sp"></span>'
        '<input id="find" placeholder="find: name, opcode, op_name" size="22"><span id="found"></span>'
        '<button id="fit">Fit</button></div>',
        '<div id="panes">',
        f'<div class="pane" id="paneA"><div class="ph"><b class="rm">A</b> {_e(result.a_name)} '
        f'(module {_e(result.a.name)}) · <span id="nameA">{_e(A["top"])}</span></div></div>',
        f'<div class="pane" id="paneB"><div class="ph"><b class="ad">B</b> {_e(result.b_name)} '
        f'(module {_e(result.b.name)}) · <span id="nameB">{_e(B["top"])}</span></div></div>',
        "</div>", '<div id="text">',
        f"<h3>{_e(result.a_name)} vs {_e(result.b_name)}: <span class=\"verdict "
        f"{'same' if result.same else 'diff'}\">{verdict}</span></h3>",
        (f"<p>modules <code>{_e(result.a.name)}</code> and <code>{_e(result.b.name)}</code>"
         + (f"; ignoring {_e(', '.join(sorted(result.ignore)))}" if result.ignore else "") + "</p>"),
        "<table>", ("<tr><th></th><th>matched</th><th>renamed</th><th>added</th><th>removed</th>"
                    "<th>changed</th><th>moved</th></tr>")]
    for key in ("computations", "instructions"):
        c = s[key]
        out.append(f"<tr><th>{key}</th><td>{c['matched']}</td><td>{c['renamed']}</td>"
                   f"<td class=\"ad\">{c['added']}</td><td class=\"rm\">{c['removed']}</td>"
                   f"<td class=\"ch\">{c['changed']}</td><td>{c.get('moved', '')}</td></tr>")
    out.append("</table>")
    if result.module_changes:
        out.append("<h4>module</h4><ul>")
        for ch in result.module_changes:
            out.append(f"<li class=\"ch\">{_e(ch.text())}</li>")
        out.append("</ul>")
    for c in result.computations:
        st = c.status
        if st == "same":
            continue
        out.append(f"<details open class=\"{st}\"><summary>{_e(st)} computation "
                   f"<code>{_e(c.title)}</code></summary>")
        rows = [("ch", f"~ {ch.text()}", None) for ch in c.attr_changes]
        css = {"remove": "rm", "add": "ad", "change": "ch", "dim": "mv", "": ""}
        for line, style in instruction_lines(result, c):
            side, comp, name = None, None, None
            t = line.lstrip()
            if t.startswith("- ") and c.a is not None:
                side, comp = "A", c.a.name
            elif t.startswith("~ ") and c.a is not None:
                side, comp = "A", c.a.name
            elif t.startswith("+ ") and c.b is not None:
                side, comp = "B", c.b.name
            if side:
                tok = t[2:].split()
                for w in tok:
                    if w.startswith("%"):
                        name = w[1:].rstrip(",:")
                        break
                    if w == "ROOT":
                        continue
            rows.append((css[style], line, (side, comp, name) if name else None))
        body = []
        for cls, t, ref in rows:
            attrs = f' class="{cls}"' if cls else ""
            if ref:
                attrs += f' data-s="{ref[0]}" data-c="{_e(ref[1])}" data-n="{_e(ref[2])}"'
            body.append(f"<span{attrs}>{_e(t)}</span>" if attrs else _e(t))
        out.append("<pre>" + "\n".join(body) + "</pre>")
        out.append("</details>")
    if unified:
        out.append("<h2>unified diff</h2><pre>")
        for line in result.unified(context=context).splitlines():
            cls = ("ad" if line.startswith("+") else "rm" if line.startswith("-")
                   else "hunk" if line.startswith("@@") else "")
            out.append(f"<span class=\"{cls}\">{_e(line)}</span>" if cls else _e(line))
        out.append("</pre>")
    out += ["</div>", '<div id="info"></div>',
            f'<script type="application/json" id="diff-data">{script_json(data)}</script>',
            scripts(), f"<script>{_JS}</script>", "<script>hloDiffPage();</script>", "</body></html>", ""]
    return "\n".join(out)
