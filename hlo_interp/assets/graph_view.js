/* hlo-interp graph viewer: one or more computations of an HLO module, laid out per computation
   (positions from Graphviz dot embedded by Python, else laid out here by the bundled dagre, lazily,
   when a computation is first shown), nested computations opened in place, recursively.
   Data: window.HLO_VIEWS = [{id, comps: {name: C}, top, expand, ...}], see graph_view.py. */
(function () {
'use strict';
var NS = 'http://www.w3.org/2000/svg';
var LOW = 0.4, MID = 0.75;  // below LOW: opcode-coloured blocks only; below MID: no edge labels
var BLOCK = {parameter: '#3fa34d', constant: '#9a9a9a', fusion: '#3d73c4', control: '#d9a400',
  async: '#d9a400', reduce: '#e07b22', dot: '#8a55c7', linalg: '#8a55c7', gather_scatter: '#d4498a',
  sort: '#d4498a', collective: '#c62828', movement: '#7f9bb8', rng: '#2aa3a3', io: '#2aa3a3',
  batchnorm: '#e07b22', elementwise: '#b8c4cf', other: '#6d6d6d'};
var FUSION_BLOCK = {kLoop: '#3d73c4', kInput: '#e07b22', kOutput: '#8a55c7', kCustom: '#6a4fc0'};

function el(tag, attrs, parent) {
  var e = document.createElementNS(NS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function r1(v) { return Math.round(v * 10) / 10; }

(function css() {  // block colours for the low zoom, from the one table above
  var s = [];
  for (var k in BLOCK) s.push('svg.low .node.k-' + k.replace('_', '-') + '>rect{fill:' + BLOCK[k] + '}');
  for (var f in FUSION_BLOCK) s.push('svg.low .node.f-' + f + '>rect{fill:' + FUSION_BLOCK[f] + '}');
  var st = document.createElement('style');
  st.textContent = s.join('\n');
  document.head.appendChild(st);
})();

// ------------------------------------------------------------------------------------------------
// Layout of one computation: {x, y (centres), W, H, p (edge points, flat), b (1: cubic Bezier
// control points as dot gives them, 0: a polyline)}

var RELAYOUT_MAX = 400;  // opening a node re-runs dagre on computations up to this size; bigger ones stretch

// dagre's layering, given as its `ranker`: parameters on the top layer and the ROOT on the bottom one
// (dot's rank=source and rank=sink), every other node on the lowest layer its users allow (a longest
// path from the top, then each node moved down next to its highest user, users first).  Linear
// time, where dagre's network simplex takes seconds on a thousand nodes.
function topBottomRanker(C) {
  var params = {}, root = null;
  C.n.forEach(function (n, i) { if (n.o === 'parameter' && !n.dup) params[i] = 1; if (n.r) root = String(i); });
  return function (g) {
    var vs = g.nodes(), indeg = {}, order = [], rank = {}, k, top = 0;
    vs.forEach(function (v) { indeg[v] = g.inEdges(v).length; });
    var todo = vs.filter(function (v) { return !indeg[v]; });
    while (todo.length) {
      var v = todo.pop();
      order.push(v);
      g.outEdges(v).forEach(function (e) { if (!--indeg[e.w]) todo.push(e.w); });
    }
    order.forEach(function (v) {
      var r = 0;
      g.inEdges(v).forEach(function (e) { r = Math.max(r, rank[e.v] + g.edge(e).minlen); });
      rank[v] = r;
      top = Math.max(top, r);
    });
    for (k = order.length - 1; k >= 0; k--) {
      var w = order[k], out = g.outEdges(w);
      if (w === root) rank[w] = top;
      if (params[w] || !out.length) continue;
      var lo = Infinity;
      out.forEach(function (e) { lo = Math.min(lo, rank[e.w] - g.edge(e).minlen); });
      rank[w] = lo;
    }
    order.forEach(function (v) { g.node(v).rank = rank[v]; });
  };
}

function dagreLayout(C, sizes) {
  var t0 = performance.now();
  var g = new dagre.graphlib.Graph({multigraph: true});
  g.setGraph({rankdir: 'TB', nodesep: 22, ranksep: 44, edgesep: 8, marginx: 8, marginy: 8, ranker: topBottomRanker(C)});
  g.setDefaultEdgeLabel(function () { return {}; });
  C.n.forEach(function (n, i) {
    var s = sizes[i] || [n.w, n.h];
    g.setNode(String(i), {width: s[0], height: s[1]});
  });
  C.e.forEach(function (e, k) {
    if (e[0] !== e[1] && !e[5]) g.setEdge(String(e[0]), String(e[1]), {weight: e[3] ? 0 : 1}, 'e' + k);
  });
  dagre.layout(g);
  var L = {x: [], y: [], W: g.graph().width || 0, H: g.graph().height || 0, p: [], b: 0, engine: 'dagre',
    open: Object.keys(sizes).map(Number).sort(function (a, b) { return a - b; }), sz: {}};
  for (var k in sizes) L.sz[k] = sizes[k];
  C.n.forEach(function (n, i) { var v = g.node(String(i)); L.x.push(v.x); L.y.push(v.y); });
  C.e.forEach(function (e, k) {
    var ed = e[0] !== e[1] && !e[5] ? g.edge(String(e[0]), String(e[1]), 'e' + k) : null, p = [];
    if (ed && ed.points) ed.points.forEach(function (q) { p.push(q.x, q.y); });
    L.p.push(p);
  });
  L.ms = Math.round(performance.now() - t0);
  return L;
}

// The layout for the computation with these nodes opened ({index: [w, h]}): one made for exactly this
// state (by dot in Python, or earlier here), else a new dagre one when the computation is small enough,
// else the collapsed one (then stretched around the opened nodes)
function layoutOf(C, sizes) {
  sizes = sizes || {};
  var key = Object.keys(sizes).map(Number).sort(function (a, b) { return a - b; }).join(',');
  C.L = C.L || [];
  var base = null;
  for (var k = 0; k < C.L.length; k++) {
    var L = C.L[k], lk = (L.open || []).join(',');
    if (lk === key) {
      var same = true;
      for (var i in sizes) { var z = L.sz && L.sz[i]; if (!z || Math.abs(z[0] - sizes[i][0]) > 1 || Math.abs(z[1] - sizes[i][1]) > 1) same = false; }
      if (same) return L;
    }
    if (!lk && !base) base = L;
  }
  if (typeof dagre === 'undefined') return base;
  if (!base || (key && C.n.length <= RELAYOUT_MAX)) {
    var made = dagreLayout(C, key && (!base || C.n.length <= RELAYOUT_MAX) ? sizes : {});
    C.L.push(made);
    if (!key || made.open.length) return made;
    base = made;
  }
  return base;
}

// ------------------------------------------------------------------------------------------------
// An instance: one computation drawn (the top one, or inside an opened node's frame)

function Inst(view, cname, depth) {
  this.view = view;
  this.name = cname;
  this.C = view.V.comps[cname];
  this.depth = depth;
  this.open = {};  // node index to Frame
  this.g = el('g', {'class': 'inst', 'data-comp': cname});
  this.build();
}

Inst.prototype.build = function () {
  var C = this.C, self = this, V = this.view.V;
  var ge = el('g', {'class': 'edges'}, this.g), gn = el('g', {'class': 'nodes'}, this.g);
  this.gf = el('g', {'class': 'frames'}, this.g);
  this.nodeEls = [];
  this.edgeEls = [];
  var nin = {};
  C.e.forEach(function (e) { if (!e[3] && !e[5]) nin[e[1]] = Math.max(nin[e[1]] || 0, e[2] + 1); });
  this.nin = nin;
  this.gfar = el('g', {'class': 'far'}, this.g);
  C.e.forEach(function (e, k) {
    if (e[5]) { self.edgeEls.push(null); return; }  // far: drawn while an end is selected
    var g = el('g', {'class': e[3] ? 'edge ctl' : 'edge'}, ge);
    var p = el('path', {}, g), t = null;
    if (e[4] && !e[3]) { t = el('text', {'class': 'el'}, g); t.textContent = e[4]; }
    self.edgeEls.push([p, t]);
  });
  C.n.forEach(function (n, i) {
    var cls = 'node k-' + n.k.replace('_', '-');
    if (n.fk) cls += ' f-' + n.fk;
    if (n.r) cls += ' root';
    if (n.c) cls += ' exp';
    if (n.dup) cls += ' dup';
    if (n.p) cls += ' partial';
    if (n.ds) cls += ' d-' + n.ds;
    var g = el('g', {'class': cls, 'data-i': i}, gn);
    el('rect', {x: r1(-n.w / 2), y: r1(-n.h / 2), width: n.w, height: n.h,
      rx: n.o === 'parameter' ? r1(n.h / 2) : 5, fill: n.f}, g);
    var y = -n.h / 2 + 4;
    var lt = el('g', {'class': 'lab'}, g);
    n.l.forEach(function (ln) {
      y += V.lineH[ln[1]];
      var t = el('text', {'class': 't-' + ln[1], y: r1(y - 3)}, lt);
      t.textContent = ln[0];
    });
    if (n.c) { var b = el('text', {'class': 'badge', x: r1(n.w / 2 - 9), y: r1(-n.h / 2 + 11)}, g); b.textContent = '+'; }
    g._inst = self; g._i = i;
    self.nodeEls.push(g);
  });
};

Inst.prototype.relayout = function () {
  var C = this.C, self = this, sizes = {};
  for (var key in this.open) { this.open[key].measure(); sizes[key] = [this.open[key].W, this.open[key].H]; }
  var L = layoutOf(C, sizes);
  this.L = L;
  var opens = [], extraW = 0, extraH = 0;
  for (key in this.open) {
    var i = +key, f = this.open[key], n = C.n[i], z = (L.sz && L.sz[key]) || [n.w, n.h];
    var o = {i: i, x: L.x[i], y: L.y[i], dw: Math.max(0, f.W - z[0]), dh: Math.max(0, f.H - z[1])};
    if (o.dw > 0.5 || o.dh > 0.5) { opens.push(o); extraW += o.dw; extraH += o.dh; }
  }
  function sx(x) { var d = 0; for (var k = 0; k < opens.length; k++) if (opens[k].x < x - 0.01) d += opens[k].dw; return d; }
  function sy(y) { var d = 0; for (var k = 0; k < opens.length; k++) if (opens[k].y < y - 0.01) d += opens[k].dh; return d; }
  var box = [], paths = [];
  C.n.forEach(function (n, i) {
    var x = L.x[i] + sx(L.x[i]), y = L.y[i] + sy(L.y[i]), f = self.open[i];
    if (f) {
      var z = (L.sz && L.sz[i]) || [n.w, n.h];
      box.push([x - z[0] / 2, y - z[1] / 2, f.W, f.H]);
    } else box.push([x - n.w / 2, y - n.h / 2, n.w, n.h]);
  });
  C.e.forEach(function (e, k) {
    var p = e[5] ? [] : L.p[k] || [], pts = [];
    for (var q = 0; q + 1 < p.length; q += 2) pts.push([p[q] + sx(p[q]), p[q + 1] + sy(p[q + 1])]);
    paths.push(pts);
  });
  this.W = L.W + extraW;
  this.H = L.H + extraH;
  var cut = this.depth === 0 && this.view.aspect ? this.arrange(box, paths, this.view.aspect, L.y) : {};
  this.box = box;
  C.n.forEach(function (n, i) {
    var b = box[i], f = self.open[i], g = self.nodeEls[i];
    if (f) {
      f.g.setAttribute('transform', 'translate(' + r1(b[0]) + ',' + r1(b[1]) + ')');
      g.style.display = 'none';
    } else {
      g.setAttribute('transform', 'translate(' + r1(b[0] + b[2] / 2) + ',' + r1(b[1] + b[3] / 2) + ')');
      g.style.display = '';
    }
  });
  C.e.forEach(function (e, k) {
    var els = self.edgeEls[k];
    if (!els) return;
    var pts = paths[k], q;
    var a = box[e[0]], b = box[e[1]], n = self.nin[e[1]] || 1;
    var ex = b[0] + b[2] / 2;
    if (!e[3] && n > 1) { var span = Math.min(b[2] - 16, 24 * (n - 1)); ex = ex - span / 2 + span * e[2] / (n - 1); }
    var start = [a[0] + a[2] / 2, a[1] + a[3]], end = [ex, b[1]];
    els[0].parentNode.classList.toggle('cont', !!cut[k]);
    if (cut[k]) {  // its ends are in different columns: a stub under the operand, one over the user
      els[0].setAttribute('d', 'M' + r1(start[0]) + ',' + r1(start[1]) + 'v18M' + r1(end[0]) + ',' + r1(end[1] - 18) + 'V' + r1(end[1]));
      if (els[1]) els[1].setAttribute('display', 'none');
      return;
    }
    if (pts.length < 2) pts = [start, end]; else { pts[0] = start; pts[pts.length - 1] = end; }
    var d = 'M' + r1(pts[0][0]) + ',' + r1(pts[0][1]);
    if (L.b && (pts.length - 1) % 3 === 0 && pts.length >= 4) {
      for (q = 1; q + 2 < pts.length; q += 3)
        d += 'C' + r1(pts[q][0]) + ',' + r1(pts[q][1]) + ' ' + r1(pts[q + 1][0]) + ',' + r1(pts[q + 1][1]) + ' ' + r1(pts[q + 2][0]) + ',' + r1(pts[q + 2][1]);
    } else {
      for (q = 1; q < pts.length; q++) {
        var u = pts[q - 1], v = pts[q], m = (v[1] - u[1]) / 2;
        d += 'C' + r1(u[0]) + ',' + r1(u[1] + m) + ' ' + r1(v[0]) + ',' + r1(v[1] - m) + ' ' + r1(v[0]) + ',' + r1(v[1]);
      }
    }
    els[0].setAttribute('d', d);
    if (els[1]) {
      els[1].removeAttribute('display');
      var last = pts[pts.length - 1], prev = pts.length > 2 ? pts[pts.length - 2] : pts[0];
      els[1].setAttribute('x', r1((last[0] + prev[0]) / 2 + 4));
      els[1].setAttribute('y', r1(Math.max((last[1] + prev[1]) / 2, last[1] - 30)));
    }
  });
};

// The overview of a big computation whose layout fits a window badly (a deep model: hundreds of
// layers a few nodes wide, its hundred weights on the top layer and their updates on the bottom one,
// which dot and dagre draw as a long diagonal between two very wide rows): the boxes are moved in
// place for a window of this aspect (width / height), and {edge index: 1} is returned for the edges
// cut by a fold.  Done on the top computation when it has ARRANGE_MIN nodes or more and
// its boxes cover less than SPARSE of its layout's area.
// 1. Each layer is centred, and one wider than WRAP times the median layer (at least 600 px) is
//    wrapped into rows of that width; edges are drawn as single curves between their boxes.
// 2. A result much taller than the window is folded into side-by-side columns, cut between rows,
//    each column captioned; an edge between columns is drawn as a stub under its operand and one
//    over its user (the whole edge is drawn while either end is selected).
var ARRANGE_MIN = 200, SPARSE = 0.03, WRAP = 3;
var FOLD_MIN = 2.5;  // fold when fitting the height leaves more than this ratio of the width unused
Inst.prototype.arrange = function (box, paths, aspect, ly) {
  var C = this.C, i, k, cut = {};
  this.cols = 1;
  this.arranged = false;
  var gf = this.gfold || (this.gfold = el('g', {'class': 'fold'}, this.g));
  while (gf.firstChild) gf.removeChild(gf.firstChild);
  if (C.n.length < ARRANGE_MIN) return cut;
  var area = 0;
  C.n.forEach(function (n) { area += n.w * n.h; });  // the nodes as boxes, opened or not
  if (area >= SPARSE * this.W * this.H) return cut;
  var M = 8, GAP = 44, RGAP = 24, HS = 22, byY = {};
  box.forEach(function (b, i) { var y = Math.round(ly[i]); (byY[y] = byY[y] || []).push(i); });  // the layout's layers
  var layers = Object.keys(byY).map(Number).sort(function (a, b) { return a - b; }).map(function (y) {
    return byY[y].sort(function (a, b) { return box[a][0] - box[b][0]; });
  });
  var widths = layers.map(function (ids) { var w = -HS; ids.forEach(function (i) { w += box[i][2] + HS; }); return w; });
  var sorted = widths.slice().sort(function (a, b) { return a - b; }), wide = 0;
  box.forEach(function (b) { wide = Math.max(wide, b[2]); });
  var Wt = Math.max(600, WRAP * sorted[sorted.length >> 1], wide), y = M;
  layers.forEach(function (ids) {
    var rows = [[]], x = 0;
    ids.forEach(function (i) {
      if (x > 0 && x + box[i][2] > Wt) { rows.push([]); x = 0; }
      rows[rows.length - 1].push(i);
      x += box[i][2] + HS;
    });
    rows.forEach(function (row, r) {
      var w = -HS, h = 0;
      row.forEach(function (i) { w += box[i][2] + HS; h = Math.max(h, box[i][3]); });
      var x = M + (Wt - w) / 2;
      row.forEach(function (i) { box[i][0] = x; box[i][1] = y + (h - box[i][3]) / 2; x += box[i][2] + HS; });
      y += h + (r < rows.length - 1 ? RGAP : GAP);
    });
  });
  for (k = 0; k < paths.length; k++) paths[k] = [];
  this.arranged = true;
  var W = Wt + 2 * M, H = y - GAP + M;
  this.W = W; this.H = H;
  var c = Math.round(Math.sqrt(H * aspect / W));
  if (H * aspect / W < FOLD_MIN * FOLD_MIN || c < 2) return cut;
  // cut between rows: the gaps of the union of the boxes' vertical extents
  var iv = box.map(function (b) { return [b[1], b[1] + b[3]]; }).sort(function (a, b) { return a[0] - b[0]; });
  var gaps = [], reach = -Infinity;
  iv.forEach(function (v) { if (v[0] > reach && reach > -Infinity) gaps.push((v[0] + reach) / 2); reach = Math.max(reach, v[1]); });
  var cuts = [], g0 = 0;
  for (k = 1; k < c; k++) {
    var want = H * k / c, best = -1;
    for (var j = g0; j < gaps.length; j++) if (best < 0 || Math.abs(gaps[j] - want) < Math.abs(gaps[best] - want)) best = j;
    if (best >= 0 && (!cuts.length || gaps[best] > cuts[cuts.length - 1])) { cuts.push(gaps[best]); g0 = best + 1; }
  }
  if (!cuts.length) return cut;
  var tops = [0].concat(cuts), CG = 120, colW = W + CG, band = [], hmax = 0;
  for (k = 0; k < tops.length; k++) hmax = Math.max(hmax, (k < cuts.length ? cuts[k] : H) - tops[k]);
  for (i = 0; i < box.length; i++) {
    var b = 0, cy = box[i][1] + box[i][3] / 2;
    while (b < cuts.length && cy > cuts[b]) b++;
    band[i] = b;
    box[i][0] += b * colW;
    box[i][1] -= tops[b];
  }
  C.e.forEach(function (e, k) { if (band[e[0]] !== band[e[1]]) cut[k] = 1; });
  this.cols = tops.length;
  for (k = 0; k < tops.length; k++) {
    var t = el('text', {'class': 'colcap', x: r1(k * colW + W / 2), y: -14}, gf);
    t.textContent = 'column ' + (k + 1) + ' of ' + tops.length + (k ? ', continuing column ' + k : '');
    if (k) el('line', {x1: r1(k * colW - CG / 2), y1: -30, x2: r1(k * colW - CG / 2), y2: r1(hmax)}, gf);
  }
  this.W = tops.length * colW - CG;
  this.H = hmax;
  return cut;
};

Inst.prototype.toggle = function (i, on) {
  var n = this.C.n[i];
  if (!n.c) return false;
  if (on === undefined) on = !this.open[i];
  if (on && !this.open[i]) {
    this.open[i] = new Frame(this, i);
    this.gf.appendChild(this.open[i].g);
  } else if (!on && this.open[i]) {
    this.gf.removeChild(this.open[i].g);
    delete this.open[i];
  }
  return true;
};

// A frame: an opened node showing the computation(s) it calls side by side (while: condition and
// body; conditional: its branches; fusion, call, async: the one it wraps)
function Frame(inst, i) {
  var n = inst.C.n[i], view = inst.view;
  this.inst = inst; this.i = i;
  this.g = el('g', {'class': 'frame d' + (inst.depth % 4), 'data-node': n.nm});
  this.rect = el('rect', {'class': 'fr', rx: 8}, this.g);
  this.title = el('text', {'class': 'title', x: 10, y: 17}, this.g);
  this.title.textContent = '\u25be ' + n.nm + ' \u00b7 ' + n.l[0][0] + ' \u2192 ' + n.sh;
  this.title._frame = this;
  this.parts = [];
  var self = this;
  n.c.forEach(function (c) {
    var cap = el('text', {'class': 'cap'}, self.g);
    cap.textContent = c[0] + ': ' + c[1];
    var sub = view.V.comps[c[1]] ? new Inst(view, c[1], inst.depth + 1) : null;
    if (sub) self.g.appendChild(sub.g);
    self.parts.push({cap: cap, inst: sub, label: c[0] + ': ' + c[1]});
  });
}

Frame.prototype.measure = function () {
  var PAD = 12, HEAD = 26, CAP = 16, x = PAD, h = 0;
  this.parts.forEach(function (p) {
    var w = p.label.length * 6.6 + 8;
    if (p.inst) { p.inst.relayout(); w = Math.max(w, p.inst.W); h = Math.max(h, p.inst.H); }
    p.cap.setAttribute('x', r1(x)); p.cap.setAttribute('y', HEAD + 11);
    if (p.inst) p.inst.g.setAttribute('transform', 'translate(' + r1(x + (w - p.inst.W) / 2) + ',' + (HEAD + CAP) + ')');
    x += w + PAD * 2;
  });
  this.W = Math.max(x - PAD, this.title.textContent.length * 7 + 24);
  this.H = HEAD + CAP + h + PAD;
  this.rect.setAttribute('width', r1(this.W));
  this.rect.setAttribute('height', r1(this.H));
};

// ------------------------------------------------------------------------------------------------
// A viewer: a pane with its own pan/zoom, minimap, and selection

function Viewer(host, V, opts) {
  this.host = host; this.V = V; this.opts = opts || {};
  this.S = 1; this.TX = 0; this.TY = 0;
  V.lineH = V.lineH || {op: 15, name: 13, shape: 13, detail: 13, warn: 12, far: 13};
  this.svg = el('svg', {'class': 'gsvg'}, host);
  el('path', {d: 'M0,0L10,5L0,10z', fill: '#777'},
    el('marker', {id: 'arrow-' + V.id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto'},
      el('defs', {}, this.svg)));
  this.svg.style.setProperty('--arrow', 'url(#arrow-' + V.id + ')');
  this.vp = el('g', {'class': 'viewport'}, this.svg);
  this.mini = document.createElement('canvas');
  this.mini.className = 'minimap';
  host.appendChild(this.mini);
  this.parents = this.findParents();
  this.setTop(V.top);
  this.events();
}

Viewer.prototype.setTop = function (cname) {
  if (this.root) this.vp.removeChild(this.root.g);
  this.top = cname;
  this.root = new Inst(this, cname, 0);
  this.vp.appendChild(this.root.g);
  this.parents = this.findParents();
  if (this.V.expand) this.expandAll(this.V.expand);
  this.relayout();
  this.fit();
};

Viewer.prototype.findParents = function () {
  // computation to [caller computation, node index], first found from the top one (for revealing)
  var V = this.V, par = {}, queue = [this.top || V.top], seen = {};
  seen[queue[0]] = 1;
  while (queue.length) {
    var c = queue.shift(), C = V.comps[c];
    if (!C) continue;
    C.n.forEach(function (n, i) {
      (n.c || []).forEach(function (cc) {
        if (!seen[cc[1]] && V.comps[cc[1]]) { seen[cc[1]] = 1; par[cc[1]] = [c, i]; queue.push(cc[1]); }
      });
    });
  }
  return par;
};

Viewer.prototype.expandAll = function (mode, inst, depth) {
  inst = inst || this.root;
  depth = depth || 0;
  if (depth > 12) return;
  var self = this;
  inst.C.n.forEach(function (n, i) {
    if (n.c && (mode === 'all' || n.o === 'fusion') && !n.dup) {
      inst.toggle(i, true);
      inst.open[i].parts.forEach(function (p) { if (p.inst) self.expandAll(mode, p.inst, depth + 1); });
    }
  });
};

Viewer.prototype.collapseAll = function () {
  for (var k in this.root.open) this.root.toggle(+k, false);
  this.relayout();
};

Viewer.prototype.relayout = function () {
  var r = this.svg.getBoundingClientRect();
  this.aspect = this.fold !== false && r.width > 0 && r.height > 0 ? r.width / r.height : null;
  this.root.relayout();
  this.svg.setAttribute('data-cols', this.root.cols || 1);
  this.svg.setAttribute('data-open', this.countOpen(this.root));
  this.drawMini(true);
};

Viewer.prototype.countOpen = function (inst) {
  var c = 0;
  for (var k in inst.open) { c++; var self = this; inst.open[k].parts.forEach(function (p) { if (p.inst) c += self.countOpen(p.inst); }); }
  return c;
};

Viewer.prototype.apply = function () {
  this.vp.setAttribute('transform', 'translate(' + r1(this.TX) + ',' + r1(this.TY) + ') scale(' + this.S + ')');
  var cl = this.svg.classList;
  cl.toggle('low', this.S < LOW);
  cl.toggle('mid', this.S >= LOW && this.S < MID);
  this.drawMini(false);
  if (this.opts.onview) this.opts.onview(this);
};

Viewer.prototype.fit = function () {
  var r = this.svg.getBoundingClientRect(), W = this.root.W + 40, H = this.root.H + 40;
  if (!r.width || !r.height) return;
  this.S = Math.min(r.width / W, r.height / H, 1.5);
  this.TX = (r.width - this.root.W * this.S) / 2;
  this.TY = (r.height - this.root.H * this.S) / 2;
  this.apply();
};

Viewer.prototype.zoomAt = function (k, mx, my) {
  var S = Math.min(40, Math.max(1e-4, this.S * k));
  k = S / this.S;
  this.TX = mx - (mx - this.TX) * k;
  this.TY = my - (my - this.TY) * k;
  this.S = S;
  this.apply();
};

Viewer.prototype.drawMini = function (nodes) {
  var c = this.mini, root = this.root;
  if (!root || !root.W) return;
  var MW = 150, MH = 110, m = Math.min(MW / root.W, MH / root.H);
  var w = Math.max(20, Math.ceil(root.W * m)), h = Math.max(20, Math.ceil(root.H * m));
  if (nodes || !this.miniImg) {
    var off = document.createElement('canvas');
    off.width = w; off.height = h;
    var ctx = off.getContext('2d');
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
    (function draw(inst, ox, oy) {
      inst.C.n.forEach(function (n, i) {
        var b = inst.box[i];
        if (inst.open[i]) {
          ctx.fillStyle = '#dfe8f6';
          ctx.fillRect((ox + b[0]) * m, (oy + b[1]) * m, Math.max(1, b[2] * m), Math.max(1, b[3] * m));
          var f = inst.open[i];
          f.parts.forEach(function (p) {
            if (!p.inst) return;
            var tr = /translate\(([-\d.e]+),([-\d.e]+)\)/.exec(p.inst.g.getAttribute('transform') || '');
            draw(p.inst, ox + b[0] + (tr ? +tr[1] : 0), oy + b[1] + (tr ? +tr[2] : 0));
          });
        } else {
          ctx.fillStyle = (n.fk && FUSION_BLOCK[n.fk]) || BLOCK[n.k] || '#888';
          if (n.ds === 'add') ctx.fillStyle = '#1a7f37';
          else if (n.ds === 'rm') ctx.fillStyle = '#cf222e';
          else if (n.ds === 'ch') ctx.fillStyle = '#d4a000';
          ctx.fillRect((ox + b[0]) * m, (oy + b[1]) * m, Math.max(1, b[2] * m), Math.max(1, b[3] * m));
        }
      });
    })(root, 0, 0);
    this.miniImg = off; this.miniM = m;
    c.width = w; c.height = h;
  }
  var g = c.getContext('2d');
  g.drawImage(this.miniImg, 0, 0);
  var r = this.svg.getBoundingClientRect(), mm = this.miniM;
  g.strokeStyle = '#d04000'; g.lineWidth = 1.5;
  g.strokeRect(-this.TX / this.S * mm, -this.TY / this.S * mm, r.width / this.S * mm, r.height / this.S * mm);
};

Viewer.prototype.events = function () {
  var self = this, svg = this.svg, drag = null, moved = false;
  svg.addEventListener('mousedown', function (ev) { drag = [ev.clientX - self.TX, ev.clientY - self.TY]; moved = false; });
  window.addEventListener('mouseup', function () { drag = null; });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    moved = self.touched = true;
    self.TX = ev.clientX - drag[0]; self.TY = ev.clientY - drag[1]; self.apply();
  });
  svg.addEventListener('wheel', function (ev) {
    ev.preventDefault();
    self.touched = true;
    var r = svg.getBoundingClientRect();
    self.zoomAt(Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, {passive: false});
  svg.addEventListener('click', function (ev) {
    if (moved) return;
    var t = ev.target;
    if (t._frame) { var f = t._frame; f.inst.toggle(f.i, false); self.relayout(); self.select(f.inst, f.i, false); return; }
    var g = t.closest ? t.closest('.node') : null;
    if (!g || !g._inst) return;
    var inst = g._inst, i = g._i;
    if (inst.C.n[i].c && inst.toggle(i)) self.relayout();
    self.select(inst, i, false);
  });
  var mini = this.mini, mdrag = false;
  function miniGo(ev) {
    var r = mini.getBoundingClientRect(), m = self.miniM, sr = svg.getBoundingClientRect();
    var x = (ev.clientX - r.left) / m, y = (ev.clientY - r.top) / m;
    self.TX = sr.width / 2 - x * self.S; self.TY = sr.height / 2 - y * self.S; self.apply();
  }
  mini.addEventListener('mousedown', function (ev) { mdrag = true; miniGo(ev); ev.stopPropagation(); });
  window.addEventListener('mouseup', function () { mdrag = false; });
  mini.addEventListener('mousemove', function (ev) { if (mdrag) miniGo(ev); });
};

// Open the callers down to computation `cname` and return its instance
Viewer.prototype.reveal = function (cname) {
  if (cname === this.top) return this.root;
  var chain = [], c = cname;
  while (c !== this.top) { var p = this.parents[c]; if (!p) return null; chain.unshift([p, c]); c = p[0]; }
  var inst = this.root;
  for (var k = 0; k < chain.length; k++) {
    var i = chain[k][0][1], want = chain[k][1];
    inst.toggle(i, true);
    var part = inst.open[i].parts.filter(function (p) { return p.inst && p.inst.name === want; })[0];
    if (!part) return null;
    inst = part.inst;
  }
  this.relayout();
  return inst;
};

Viewer.prototype.nodeIndex = function (C, name) {
  for (var i = 0; i < C.n.length; i++) if (C.n[i].nm === name) return i;
  return -1;
};

Viewer.prototype.selectName = function (cname, name, center) {
  var C = this.V.comps[cname];
  if (!C) return false;
  var i = this.nodeIndex(C, name);
  if (i < 0) return false;
  var inst = this.reveal(cname);
  if (!inst) return false;
  this.select(inst, i, center !== false);
  return true;
};

Inst.prototype.drawFar = function (i) {
  var g = this.gfar, C = this.C, box = this.box;
  while (g.firstChild) g.removeChild(g.firstChild);
  if (i === null) return;
  C.e.forEach(function (e) {
    if (!e[5] || (e[0] !== i && e[1] !== i)) return;
    var a = box[e[0]], b = box[e[1]];
    var x0 = a[0] + a[2] / 2, y0 = a[1] + a[3], x1 = b[0] + b[2] / 2, y1 = b[1], m = (y1 - y0) / 2;
    el('path', {d: 'M' + r1(x0) + ',' + r1(y0) + 'C' + r1(x0) + ',' + r1(y0 + m) + ' ' + r1(x1) + ',' + r1(y1 - m) + ' ' + r1(x1) + ',' + r1(y1)}, g);
  });
};

Viewer.prototype.select = function (inst, i, center) {
  this.touched = true;
  if (this.sel) this.sel.classList.remove('sel');
  if (this.farInst) this.farInst.drawFar(null);
  inst.drawFar(i);
  this.farInst = inst;
  var g = inst.nodeEls[i];
  var f = inst.open[i];
  this.sel = f ? f.rect : g;
  this.sel.classList.add('sel');
  this.selected = [inst.name, inst.C.n[i].nm];
  if (center) this.centerOn(f ? f.g : g);
  if (this.opts.onselect) this.opts.onselect(this, inst, i);
};

Viewer.prototype.centerOn = function (g) {
  if (this.S < 1) {
    var r0 = this.svg.getBoundingClientRect();
    this.zoomAt(1 / this.S, r0.width / 2, r0.height / 2);
  }
  var r = g.getBoundingClientRect(), s = this.svg.getBoundingClientRect();
  this.TX += (s.left + s.width / 2) - (r.left + r.width / 2);
  this.TY += (s.top + s.height / 2) - (r.top + r.height / 2);
  this.apply();
};

// ------------------------------------------------------------------------------------------------
// The page: bar, info box, find, URL fragment

function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }

function infoHtml(viewer, inst, i) {
  var C = inst.C, n = C.n[i], ops = [], users = [];
  C.e.forEach(function (e) {
    if (e[1] === i) ops.push([e[2], C.n[e[0]].nm, e[3]]);
    if (e[0] === i && !users.some(function (u) { return u === C.n[e[1]].nm; })) users.push(C.n[e[1]].nm);
  });
  ops.sort(function (a, b) { return a[0] - b[0]; });
  var link = function (nm) { return '<a href="#' + esc(inst.name + '/' + nm) + '">%' + esc(nm) + '</a>'; };
  var h = '<button class="x" title="close">\u00d7</button><b>%' + esc(n.nm) + '</b> in ' + esc(inst.name) +
    (n.ds ? ' <span class="ds ' + n.ds + '">' + {add: 'added', rm: 'removed', ch: 'changed'}[n.ds] + '</span>' : '') +
    '<pre>' + esc(n.t) + '</pre>' + '<div>shape <code>' + esc(n.sh) + '</code></div>';
  if (n.src) h += '<div>source <code>' + esc(n.src) + '</code></div>';
  if (n.on) h += '<div>op_name <code>' + esc(n.on) + '</code></div>';
  if (ops.length) h += '<div>operands: ' + ops.map(function (o) { return (o[2] ? '(control) ' : '') + link(o[1]); }).join(', ') + '</div>';
  if (users.length) h += '<div>users: ' + users.map(link).join(', ') + '</div>';
  if (n.c) h += '<div>calls: ' + n.c.map(function (c) {
    return esc(c[0]) + ' ' + (viewer.V.comps[c[1]] ? '<a href="#' + esc(c[1] + '/' + rootName(viewer.V, c[1])) + '">' + esc(c[1]) + '</a>' : esc(c[1]));
  }).join(', ') + '</div>';
  if (n.dc) h += '<div class="dc">' + n.dc.map(esc).join('<br>') + '</div>';
  return h;
}
function rootName(V, c) { var C = V.comps[c]; for (var i = 0; i < C.n.length; i++) if (C.n[i].r) return C.n[i].nm; return C.n[C.n.length - 1].nm; }

function Finder(input, viewers, countEl) {
  var hits = [], k = -1;
  function search(q) {
    hits = [];
    q = q.trim().replace(/^%/, '').toLowerCase();
    if (!q) return;
    viewers.forEach(function (v) {
      var order = [v.top].concat(Object.keys(v.parents));
      order.forEach(function (c) {
        var C = v.V.comps[c], seen = {};
        C.n.forEach(function (n) {
          if (seen[n.nm]) return;
          var nm = n.nm.toLowerCase();
          var score = nm === q ? 0 : n.o === q ? 2 : nm.indexOf(q) >= 0 ? 1 : (n.on && n.on.toLowerCase().indexOf(q) >= 0) ? 3 : -1;
          if (score >= 0) { seen[n.nm] = 1; hits.push([score, v, c, n.nm]); }
        });
      });
    });
    hits.sort(function (a, b) { return a[0] - b[0]; });
  }
  input.addEventListener('input', function () { search(input.value); k = -1; countEl.textContent = input.value ? hits.length + ' found' : ''; input.classList.toggle('miss', !!input.value && !hits.length); });
  input.addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter' || !hits.length) return;
    k = (k + (ev.shiftKey ? hits.length - 1 : 1)) % hits.length;
    var h = hits[k];
    h[1].selectName(h[2], h[3], true);
    countEl.textContent = (k + 1) + ' of ' + hits.length;
  });
}

function selectHash(viewers) {
  var h = decodeURIComponent(location.hash.replace(/^#/, ''));
  if (!h) return false;
  var parts = h.split('/'), c = parts.length > 1 ? parts[0] : null, nm = parts[parts.length - 1].replace(/^%/, '');
  for (var k = 0; k < viewers.length; k++) {
    var v = viewers[k];
    if (c ? v.selectName(c, nm, true) : v.selectName(v.top, nm, true)) return true;
    if (!c) { for (var cc in v.parents) if (v.selectName(cc, nm, true)) return true; }
  }
  return false;
}

window.HloGraph = {Viewer: Viewer, Finder: Finder, infoHtml: infoHtml, selectHash: selectHash, layoutOf: layoutOf, BLOCK: BLOCK};

// The single-graph page
window.hloGraphPage = function () {
  var t0 = performance.now();
  var V = JSON.parse(document.getElementById('graph-data').textContent);
  document.body.setAttribute('data-parse-ms', Math.round(performance.now() - t0));
  var info = document.getElementById('info');
  function onselect(v, inst, i) {
    info.innerHTML = infoHtml(v, inst, i);
    info.style.display = 'block';
    var n = inst.C.n[i];
    var hash = '#' + (inst.name === v.top ? '' : inst.name + '/') + n.nm;
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }
  var v = new Viewer(document.getElementById('view'), V, {onselect: onselect});
  info.addEventListener('click', function (ev) { if (ev.target.classList.contains('x')) info.style.display = 'none'; });
  new Finder(document.getElementById('find'), [v], document.getElementById('found'));
  document.getElementById('fit').onclick = function () { v.fit(); };
  document.getElementById('expand').onclick = function () { v.expandAll('fusion'); v.relayout(); v.fit(); };
  document.getElementById('expandall').onclick = function () { v.expandAll('all'); v.relayout(); v.fit(); };
  document.getElementById('collapse').onclick = function () { v.collapseAll(); v.fit(); };
  window.addEventListener('hashchange', function () { selectHash([v]); });
  window.addEventListener('resize', function () { v.relayout(); if (!v.touched) v.fit(); });
  selectHash([v]);
  window.hloViewer = v;
  document.body.setAttribute('data-load-ms', Math.round(performance.now() - t0));
  document.body.setAttribute('data-ready-ms', Math.round(performance.now()));  // since navigation start
  document.body.setAttribute('data-engine', v.root.L.engine);
  document.body.setAttribute('data-ready', '1');
};
})();
