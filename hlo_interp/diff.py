"""Structural diff of two HLO modules: what changed between two dumps, not which names moved.

    >>> from hlo_interp.diff import diff_modules
    >>> d = diff_modules(parse(a_text), parse(b_text), ignore={"metadata"})
    >>> d.same, d.summary()["instructions"], print(d.to_text())

Instruction names, instruction order and computation order do not count: computations and instructions
are matched by graph structure, in the manner of XLA's hlo_diff tool (xla/hlo/tools/hlo_diff):

1. every instruction gets a *local* fingerprint (opcode, shape, attributes, constant bits, parameter
   number, and for called computations their structural fingerprint, never their names) and a
   *subgraph* fingerprint (its local one plus its operands' subgraph fingerprints, Merkle style);
   a computation's fingerprint is the multiset of its instructions' fingerprints;
2. computations with a fingerprint unique on both sides match, the entries match, and after the
   instructions of a computation pair are matched, the computations that matched instructions call
   match in turn (then by name, then by signature);
3. inside a computation pair: subgraphs whose fingerprint is unique on both sides match whole (largest
   first); the roots match and parameters match by number; then matches spread top-down (operands
   of matched instructions, by position) and bottom-up (users of matched instructions that use them at
   the same operand position), preferring identical subgraphs; what is left is paired greedily by
   opcode and a similarity score (same shape, matched operands, matched users), and spreading resumes;
   last, an unmatched instruction whose operands all match those of exactly one unmatched instruction
   of another opcode and the same shape is paired with it (an opcode change: multiply -> add).

Matched instructions are then compared in full (shape, attributes, operands through the matching,
called computations, constant values): differences are *changed*, unmatched ones *added*/*removed*,
except that an unmatched instruction identical (same local fingerprint) to an unmatched one in
another computation is *moved* (fusion and call inlining move instructions between computations).
Two modules are the same when nothing was added, removed, moved or changed, in computations,
instructions or the module header.
`ignore` drops parts from both matching and comparison: metadata (and the stack-frame tables),
backend_config, layouts (of shapes and of shape-valued attributes), names (renames are not listed;
they never count as a difference).
The result's text, JSON and unified renderings are diff_render.py's, its HTML page diff_html.py's.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import ir
from .opcodes import COMMON_ATTRS, HEADER_ATTRS, schema_for
from .syntax import printer as P
from .syntax.literals import format_literal

IGNORABLE = ("metadata", "backend_config", "layouts", "names")
# Never part of the structural fingerprints used for matching (they churn between compilations);
# still compared afterwards unless ignored.
_UNSTRUCTURAL = frozenset({"metadata", "backend_config", "control-predecessors", "statistics", "origin"})
_GREEDY_LIMIT = 50_000  # candidate pairs scored per opcode group before falling back to order
_CANDIDATES = 32  # users scored per instruction when spreading bottom-up


def normalize_ignore(ignore: Iterable[str] | None) -> frozenset:
    """{'metadata', ...} from an iterable of names or comma lists; ValueError on an unknown one."""
    out = set()
    if isinstance(ignore, str):
        ignore = [ignore]
    for item in ignore or ():
        for part in str(item).split(","):
            part = part.strip().lower()
            if not part:
                continue
            if part not in IGNORABLE:
                raise ValueError(f"unknown --ignore item '{part}' (allowed: {', '.join(IGNORABLE)})")
            out.add(part)
    return frozenset(out)


# --------------------------------------------------------------------------------------------------
# Results

@dataclass
class Change:
    """One difference of a matched pair: what (shape, attribute, operands, literal, parameter, root,
    header, computation attribute), which attribute, and the texts before and after."""
    what: str
    name: str | None
    before: str | None
    after: str | None
    note: str | None = None  # e.g. "body changed" for a call of a changed computation

    def to_json(self) -> dict:
        out = {"what": self.what, "name": self.name, "before": self.before, "after": self.after}
        if self.note:
            out["note"] = self.note
        return out

    def text(self) -> str:
        if self.before == self.after:
            body = _short(self.after)
        else:
            body = f"{_short(self.before)} -> {_short(self.after)}"
        return f"{self.label()}: {body}" + (f" ({self.note})" if self.note else "")

    def label(self) -> str:
        return self.name if self.name else self.what


@dataclass
class InstructionChange:
    a: ir.Instruction
    b: ir.Instruction
    changes: list[Change]


@dataclass
class ComputationDiff:
    a: ir.Computation | None
    b: ir.Computation | None
    added: list[ir.Instruction] = field(default_factory=list)
    removed: list[ir.Instruction] = field(default_factory=list)
    changed: list[InstructionChange] = field(default_factory=list)
    attr_changes: list[Change] = field(default_factory=list)
    matched: int = 0
    pairs: list[tuple[str, str]] = field(default_factory=list)  # every matched (A name, B name)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    # unmatched instructions found identical (same node) in another computation: (here, there, comp)
    moved_out: list[tuple[ir.Instruction, ir.Instruction, str]] = field(default_factory=list)
    moved_in: list[tuple[ir.Instruction, ir.Instruction, str]] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.a is None:
            return "added"
        if self.b is None:
            return "removed"
        if self.added or self.removed or self.changed or self.attr_changes or self.moved_in or self.moved_out:
            return "changed"
        return "same"

    @property
    def title(self) -> str:
        if self.a is None:
            return f"%{self.b.name}"
        if self.b is None or self.a.name == self.b.name:
            return f"%{self.a.name}"
        return f"%{self.a.name} -> %{self.b.name}"


@dataclass
class DiffResult:
    a: ir.Module
    b: ir.Module
    ignore: frozenset
    computations: list[ComputationDiff]
    module_changes: list[Change]
    a_name: str = "A"
    b_name: str = "B"

    @property
    def same(self) -> bool:
        return not self.module_changes and all(c.status == "same" for c in self.computations)

    def summary(self) -> dict:
        cs = self.computations
        matched = [c for c in cs if c.a is not None and c.b is not None]
        return {
            "computations": {
                "matched": len(matched),
                "renamed": sum(1 for c in matched if c.a.name != c.b.name),
                "added": sum(1 for c in cs if c.a is None),
                "removed": sum(1 for c in cs if c.b is None),
                "changed": sum(1 for c in cs if c.status == "changed"),
            },
            "instructions": {
                "matched": sum(c.matched for c in cs),
                "renamed": sum(len(c.renamed) for c in cs),
                # instructions of added/removed computations count as added/removed (or moved)
                "added": sum(len(c.added) for c in cs),
                "removed": sum(len(c.removed) for c in cs),
                "moved": sum(len(c.moved_in) for c in cs),
                "changed": sum(len(c.changed) for c in cs),
            },
        }

    # ---- renderings (diff_render.py writes them; these are the result's API)

    def to_json(self) -> dict:
        """The diff as JSON-ready data (schema "hlo-diff/1")."""
        from .diff_render import to_json
        return to_json(self)

    def to_text(self, *, verbose: bool = False) -> str:
        """A plain-text report: header, counts, then each computation that differs."""
        from .diff_render import to_text
        return to_text(self, verbose=verbose)

    def to_html(self, *, unified: bool = False, context: int = 3, engine: str = "auto") -> str:
        """One self-contained HTML page: both modules' graphs side by side, added/removed/changed
        instructions coloured, matched pairs linked, the text diff beside (see diff_html)."""
        from .diff_html import diff_to_html
        return diff_to_html(self, unified=unified, context=context, engine=engine)

    def unified(self, context: int = 3) -> str:
        """A plain unified diff of the canonical texts (ignored parts left out).  B's matched
        computations and instructions are printed under A's names, so renumbering shows no lines."""
        from .diff_render import unified
        return unified(self, context)


def _short(s: str | None, limit: int = 200) -> str:
    if s is None:
        return "(none)"
    return s if len(s) <= limit else s[:limit - 3] + "..."


# --------------------------------------------------------------------------------------------------
# Fingerprints

_KINDS: dict[str, dict[str, str]] = {}


def _kinds(opcode: str) -> dict[str, str]:
    k = _KINDS.get(opcode)
    if k is None:
        specs, _ = schema_for(opcode)
        k = {s.name: s.kind for s in COMMON_ATTRS}
        k.update({s.name: s.kind for s in specs})
        _KINDS[opcode] = k
    return k


class _Side:
    """One module, indexed for matching: per computation, its instructions, operand indices, users,
    and fingerprints."""

    def __init__(self, m: ir.Module, ignore: frozenset):
        self.m = m
        self.ignore = ignore
        self.layouts = "layouts" not in ignore
        self.comps = list(m.computations)
        self.comp_index = {c.name: k for k, c in enumerate(self.comps)}
        self.ins: list[list[ir.Instruction]] = []
        self.ops: list[list[list[int]]] = []
        self.users: list[list[list[tuple[int, int]]]] = []
        self.index: list[dict[str, int]] = []
        self.callees: list[list[list[str]]] = []  # per comp, per instruction: called computation names
        self._shape_cache: dict = {}
        for c in self.comps:
            instrs = c.instructions
            idx = {i.name: k for k, i in enumerate(instrs)}
            ops = [[idx.get(o, -1) for o in i.operands] for i in instrs]
            users: list[list[tuple[int, int]]] = [[] for _ in instrs]
            for k, o in enumerate(ops):
                for pos, j in enumerate(o):
                    if j >= 0:
                        users[j].append((k, pos))
            callees = []
            for i in instrs:
                called = []
                if i.attrs:
                    kinds = _kinds(i.opcode)
                    for key, val in i.attrs.items():
                        kind = "generic" if key in i.unknown_attrs else kinds.get(key)
                        if kind == "comp":
                            called.append(val)
                        elif kind == "comps":
                            called.extend(val)
                callees.append(called)
            self.ins.append(instrs)
            self.ops.append(ops)
            self.users.append(users)
            self.index.append(idx)
            self.callees.append(callees)
        self.comp_fp: list[int | None] = [None] * len(self.comps)
        self.local: list[list[int]] = [[] for _ in self.comps]
        self.sub: list[list[int]] = [[] for _ in self.comps]
        self.height: list[list[int]] = [[] for _ in self.comps]
        for k in self._callee_order():
            self._fingerprint(k)

    def shape_text(self, shape) -> str:
        if shape is None:
            return ""
        t = self._shape_cache.get(id(shape))
        if t is None or t[0] is not shape:
            t = (shape, ir.shape_text(shape, self.layouts))
            self._shape_cache[id(shape)] = t
        return t[1]

    def _callee_order(self) -> list[int]:
        """Computations, callees before callers (a cycle, invalid in HLO, is cut)."""
        order, state = [], [0] * len(self.comps)
        for start in range(len(self.comps)):
            if state[start]:
                continue
            stack = [(start, iter(self._callee_indices(start)))]
            state[start] = 1
            while stack:
                k, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    state[k] = 2
                    order.append(k)
                elif state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, iter(self._callee_indices(nxt))))
        return order

    def _callee_indices(self, k: int) -> list[int]:
        out = []
        for called in self.callees[k]:
            for name in called:
                j = self.comp_index.get(name)
                if j is not None and j != k:
                    out.append(j)
        return out

    def attr_value(self, ins: ir.Instruction, key: str, val) -> str:
        """The comparable text of an attribute (called computations by name: callers map them)."""
        kind = "generic" if key in ins.unknown_attrs else _kinds(ins.opcode).get(key, "generic")
        if not self.layouts:
            if kind == "shape":
                return ir.shape_text(val, False)
            if kind == "shapes":
                return "{" + ", ".join(ir.shape_text(s, False) for s in val) + "}"
            if kind == "program_shape":
                return _program_shape_without_layouts(val)
        return P.attr_value_text(kind, val)

    def local_sig(self, k: int, ins: ir.Instruction) -> tuple:
        parts = [ins.opcode, self.shape_text(ins.shape), ins.parameter_number, len(ins.operands)]
        if ins.attrs:
            kinds = _kinds(ins.opcode)
            for key, val in ins.attrs.items():
                if key in _UNSTRUCTURAL:
                    continue
                kind = "generic" if key in ins.unknown_attrs else kinds.get(key)
                if kind == "comp":
                    j = self.comp_index.get(val)
                    parts.append((key, self.comp_fp[j] if j is not None else val))
                elif kind == "comps":
                    parts.append((key, tuple(self.comp_fp[self.comp_index[v]] if v in self.comp_index
                                             else v for v in val)))
                elif kind == "names":
                    continue
                else:
                    parts.append((key, self.attr_value(ins, key, val)))
        lit = ins.literal
        if lit is not None:
            parts.append(_literal_key(lit))
        return tuple(parts)

    def _fingerprint(self, k: int) -> None:
        instrs, ops = self.ins[k], self.ops[k]
        n = len(instrs)
        local = [hash(self.local_sig(k, i)) for i in instrs]
        sub = [0] * n
        height = [0] * n
        done = [False] * n
        for start in range(n):  # iterative post-order over operands (text order need not be one)
            if done[start]:
                continue
            stack = [start]
            while stack:
                v = stack[-1]
                if done[v]:
                    stack.pop()
                    continue
                pending = [o for o in ops[v] if o >= 0 and not done[o] and o != v]
                if pending and len(stack) <= n:
                    stack.extend(pending)
                    continue
                stack.pop()
                done[v] = True
                ov = [o for o in ops[v] if o >= 0 and done[o]]
                sub[v] = hash((local[v], tuple(sub[o] for o in ov)))
                height[v] = 1 + max((height[o] for o in ov), default=0)
        self.local[k], self.sub[k], self.height[k] = local, sub, height
        root = instrs.index(self.comps[k].root) if instrs else -1
        self.comp_fp[k] = hash((tuple(sorted(sub)), sub[root] if root >= 0 else 0,
                                tuple(sorted(self.comps[k].attrs.items(), key=lambda kv: kv[0]))
                                if self.comps[k].attrs else ()))


def _program_shape_without_layouts(ps) -> str:
    return "(" + ", ".join(ir.shape_text(s, False) for s in ps.params) + ")->" + ir.shape_text(ps.result, False)


def _literal_key(lit: ir.Literal):
    v = lit.value
    if v is None:
        return ("elided",)
    if isinstance(v, tuple):
        return ("tuple",) + tuple(_literal_key(x) for x in v)
    return (str(v.dtype), v.shape, hash(v.tobytes()))


# --------------------------------------------------------------------------------------------------
# Matching inside one computation pair

class _Matcher:
    """Matches the instructions of computation `ka` of side A with those of computation `kb` of side
    B.  Per side (suffix a / b), by instruction index: `i*` the instructions, `o*` their operands'
    indices (-1: not in this computation), `u*` their users as (user, operand position), `l*` local
    and `s*` subgraph fingerprints.  The result: `ab` / `ba` (index in A -> index in B and back);
    `work` holds new pairs whose neighbours have not been looked at yet."""

    def __init__(self, A: _Side, ka: int, B: _Side, kb: int):
        self.A, self.B, self.ka, self.kb = A, B, ka, kb
        self.ia, self.ib = A.ins[ka], B.ins[kb]
        self.oa, self.ob = A.ops[ka], B.ops[kb]
        self.ua, self.ub = A.users[ka], B.users[kb]
        self.la, self.lb = A.local[ka], B.local[kb]
        self.sa, self.sb = A.sub[ka], B.sub[kb]
        self.ab: dict[int, int] = {}
        self.ba: dict[int, int] = {}
        self.work: list[tuple[int, int]] = []

    def pair(self, i: int, j: int) -> bool:
        if i in self.ab or j in self.ba:
            return False
        self.ab[i] = j
        self.ba[j] = i
        self.work.append((i, j))
        return True

    def pair_subgraph(self, i: int, j: int) -> None:
        """Map two identical subgraphs node by node (operands by position)."""
        stack = [(i, j)]
        while stack:
            x, y = stack.pop()
            if x in self.ab or y in self.ba or self.la[x] != self.lb[y]:
                continue
            self.pair(x, y)
            for ox, oy in zip(self.oa[x], self.ob[y]):
                if ox >= 0 and oy >= 0:
                    stack.append((ox, oy))

    def run(self) -> None:
        ia, ib = self.ia, self.ib
        # 1. subgraphs unique on both sides, tallest first
        count_a: dict[int, int] = {}
        for s in self.sa:
            count_a[s] = count_a.get(s, 0) + 1
        where_b: dict[int, int] = {}
        count_b: dict[int, int] = {}
        for j, s in enumerate(self.sb):
            count_b[s] = count_b.get(s, 0) + 1
            where_b[s] = j
        ha = self.A.height[self.ka]
        for i in sorted(range(len(ia)), key=lambda x: -ha[x]):
            s = self.sa[i]
            if i not in self.ab and count_a[s] == 1 and count_b.get(s) == 1:
                self.pair_subgraph(i, where_b[s])
        # 2. roots, parameters by number
        ra, rb = self.A.comps[self.ka].root, self.B.comps[self.kb].root
        if ia and ib and ra.opcode == rb.opcode:
            i, j = self.A.index[self.ka][ra.name], self.B.index[self.kb][rb.name]
            if self.sa[i] == self.sb[j]:
                self.pair_subgraph(i, j)
            else:
                self.pair(i, j)
        pb = {x.parameter_number: k for k, x in enumerate(ib) if x.opcode == "parameter"}
        for i, x in enumerate(ia):
            if x.opcode == "parameter" and x.parameter_number in pb:
                self.pair(i, pb[x.parameter_number])
        # 3. spread; 4. greedy leftovers; spread again until nothing new; 5. opcode changes
        while True:
            self.spread()
            if self.greedy():
                continue
            if not self.opcode_changes():
                break

    def opcode_changes(self) -> bool:
        """Pair an unmatched instruction with the one unmatched instruction of another opcode and
        the same shape whose operands are exactly its operands' matches (`multiply` became `add`)."""
        progress = False
        for x in range(len(self.ia)):
            if x in self.ab:
                continue
            ops = self.oa[x]
            if not ops or any(o < 0 or o not in self.ab for o in ops):
                continue
            target = [self.ab[o] for o in ops]
            shape = self.A.shape_text(self.ia[x].shape)
            found = [v for v, pos in self.ub[target[0]]
                     if pos == 0 and v not in self.ba and self.ob[v] == target
                     and self.ib[v].opcode != self.ia[x].opcode
                     and self.B.shape_text(self.ib[v].shape) == shape]
            if len(found) == 1:
                self.pair(x, found[0])
                progress = True
        return progress

    def spread(self) -> None:
        ia, ib = self.ia, self.ib
        while self.work:
            i, j = self.work.pop()
            oa, ob = self.oa[i], self.ob[j]
            # top-down: operands at the same position
            if len(oa) == len(ob):
                for x, y in zip(oa, ob):
                    if x >= 0 and y >= 0 and x not in self.ab and y not in self.ba \
                            and ia[x].opcode == ib[y].opcode:
                        if self.sa[x] == self.sb[y]:
                            self.pair_subgraph(x, y)
                        else:
                            self.pair(x, y)
            else:
                free_b = [y for y in ob if y >= 0 and y not in self.ba]
                for x in oa:
                    if x < 0 or x in self.ab:
                        continue
                    best = self._best(x, free_b[:_CANDIDATES])
                    if best is not None:
                        free_b.remove(best)
                        self.pair(x, best)
            # bottom-up: users that use the pair at the same operand position (grouped, so that a
            # value with thousands of users costs linear time)
            groups: dict[tuple[int, str], list[int]] = {}
            for v, pos in self.ub[j]:
                if v not in self.ba:
                    groups.setdefault((pos, ib[v].opcode), []).append(v)
            if not groups:
                continue
            by_fp: dict[tuple[int, str], dict[int, list[int]]] = {}
            for u, pos in self.ua[i]:
                if u in self.ab:
                    continue
                key = (pos, ia[u].opcode)
                cands = groups.get(key)
                if not cands:
                    continue
                if len(cands) > _CANDIDATES:
                    fps = by_fp.get(key)
                    if fps is None:
                        fps = by_fp[key] = {}
                        for v in reversed(cands):
                            fps.setdefault(self.sb[v], []).append(v)
                    same = fps.get(self.sa[u])
                    if same:
                        v = self.B.index[self.kb].get(ia[u].name)  # among equals, the same name first
                        if v is None or v in self.ba or self.sb[v] != self.sa[u] or ib[v].opcode != key[1] \
                                or pos >= len(self.ob[v]) or self.ob[v][pos] != j:
                            while same and same[-1] in self.ba:
                                same.pop()
                            v = same[-1] if same else None
                        if v is not None:
                            self.pair_subgraph(u, v)
                            continue
                    cands = [v for v in cands[:4 * _CANDIDATES] if v not in self.ba][:_CANDIDATES]
                else:
                    cands = [v for v in cands if v not in self.ba]
                best = self._best(u, cands)
                if best is not None:
                    if self.sa[u] == self.sb[best]:
                        self.pair_subgraph(u, best)
                    else:
                        self.pair(u, best)

    def _best(self, x: int, cands: list[int]) -> int | None:
        """The candidate most like x: same subgraph, same local fingerprint, then the score."""
        if not cands:
            return None
        if len(cands) == 1:
            y = cands[0]
            return y if self.ia[x].opcode == self.ib[y].opcode else None
        best, best_score = None, -1.0
        for y in cands:
            if self.ia[x].opcode != self.ib[y].opcode:
                continue
            sc = self.score(x, y)
            if sc > best_score:
                best, best_score = y, sc
        return best

    def score(self, x: int, y: int) -> float:
        """Similarity of two same-opcode instructions: identical subgraph, identical node, shape,
        operands and users already matched to each other."""
        sc = 0.01 if self.ia[x].name == self.ib[y].name else 0.0  # a tie-breaker only
        if self.sa[x] == self.sb[y]:
            return sc + 10.0
        if self.la[x] == self.lb[y]:
            sc += 3.0
        elif self.A.shape_text(self.ia[x].shape) == self.B.shape_text(self.ib[y].shape):
            sc += 1.0
        oa, ob = self.oa[x], self.ob[y]
        if oa or ob:
            hits = sum(1 for p, q in zip(oa, ob) if p >= 0 and self.ab.get(p) == q)
            sc += 2.0 * hits / max(len(oa), len(ob))
        ua, ub = self.ua[x], self.ub[y]
        if ua or ub:
            sb = {v for v, _ in ub}
            hits = sum(1 for u, _ in ua if self.ab.get(u) in sb)
            sc += 1.0 * hits / max(len(ua), len(ub))
        return sc

    def greedy(self) -> bool:
        """Pair what is left, per opcode, in three stages (identical subgraphs, then identical
        nodes, in order; then best similarity score first); after the first stage that pairs
        anything, return True so that matches spread before further guessing."""
        # A stage that pairs nothing leaves the unmatched instructions as they are: the three
        # stages share one grouping.
        by_op_a: dict[str, list[int]] = {}
        for i, x in enumerate(self.ia):
            if i not in self.ab:
                by_op_a.setdefault(x.opcode, []).append(i)
        if not by_op_a:
            return False
        by_op_b: dict[str, list[int]] = {}
        for j, y in enumerate(self.ib):
            if j not in self.ba and y.opcode in by_op_a:
                by_op_b.setdefault(y.opcode, []).append(j)
        for stage in ("subgraph", "node", "score"):
            progress = False
            for op, xs in by_op_a.items():
                ys = by_op_b.get(op)
                if not ys:
                    continue
                if stage != "score":
                    key_a, key_b = (self.sa, self.sb) if stage == "subgraph" else (self.la, self.lb)
                    pool: dict[int, list[int]] = {}
                    for j in reversed(ys):
                        pool.setdefault(key_b[j], []).append(j)
                    same_name = self.B.index[self.kb]
                    for i in xs:
                        if i in self.ab:
                            continue
                        j = same_name.get(self.ia[i].name)  # among equals, the same name first
                        if j is not None and j not in self.ba and key_b[j] == key_a[i] \
                                and self.ib[j].opcode == op:
                            if stage == "subgraph":
                                self.pair_subgraph(i, j)
                            else:
                                self.pair(i, j)
                            progress = True
                            continue
                        lst = pool.get(key_a[i])
                        while lst:
                            j = lst.pop()
                            if j not in self.ba:
                                if stage == "subgraph":
                                    self.pair_subgraph(i, j)
                                else:
                                    self.pair(i, j)
                                progress = True
                                break
                    continue
                if len(xs) * len(ys) <= _GREEDY_LIMIT:
                    scored = sorted(((self.score(i, j), i, j) for i in xs for j in ys),
                                    key=lambda t: (-t[0], t[1], t[2]))
                    for sc, i, j in scored:
                        if sc > 0 and i not in self.ab and j not in self.ba:
                            self.pair(i, j)
                            progress = True
                else:  # too many to score: same shape, in order
                    pool_s: dict[str, list[int]] = {}
                    for j in reversed(ys):
                        pool_s.setdefault(self.B.shape_text(self.ib[j].shape), []).append(j)
                    for i in xs:
                        lst = pool_s.get(self.A.shape_text(self.ia[i].shape))
                        if lst:
                            self.pair(i, lst.pop())
                            progress = True
            if progress:
                return True
        return False


# --------------------------------------------------------------------------------------------------
# The diff

def diff_modules(a: ir.Module, b: ir.Module, ignore: Iterable[str] | None = (), *,
                 a_name: str | None = None, b_name: str | None = None) -> DiffResult:
    """Structural diff of module `a` (before) against `b` (after).  `ignore`: any of 'metadata',
    'backend_config', 'layouts', 'names' (or comma lists of them)."""
    ig = normalize_ignore(ignore)
    A, B = _Side(a, ig), _Side(b, ig)
    comp_ab: dict[int, int] = {}
    comp_ba: dict[int, int] = {}
    matchers: dict[int, _Matcher] = {}
    queue: list[tuple[int, int]] = []

    def match_comps(x: int, y: int) -> None:
        if x in comp_ab or y in comp_ba:
            return
        comp_ab[x], comp_ba[y] = y, x
        queue.append((x, y))

    def drain() -> None:
        while queue:
            x, y = queue.pop(0)
            mt = _Matcher(A, x, B, y)
            mt.run()
            matchers[x] = mt
            # computations called by matched instructions match, in order
            for i, j in mt.ab.items():
                ca, cb = A.callees[x][i], B.callees[y][j]
                for na, nb in zip(ca, cb):
                    p, q = A.comp_index.get(na), B.comp_index.get(nb)
                    if p is not None and q is not None:
                        match_comps(p, q)

    # entries first, then computations whose fingerprint is unique on both sides
    ea = A.comp_index.get(a.entry.name) if a.computations else None
    eb = B.comp_index.get(b.entry.name) if b.computations else None
    if ea is not None and eb is not None:
        match_comps(ea, eb)
    fa: dict[int, list[int]] = {}
    fb: dict[int, list[int]] = {}
    for k, f in enumerate(A.comp_fp):
        fa.setdefault(f, []).append(k)
    for k, f in enumerate(B.comp_fp):
        fb.setdefault(f, []).append(k)
    for f, xs in fa.items():
        ys = fb.get(f)
        if ys and len(xs) == 1 and len(ys) == 1:
            match_comps(xs[0], ys[0])
    drain()
    # leftovers: identical ones in order, then same name, then same signature, in order
    for f, xs in fa.items():
        ys = [k for k in fb.get(f, ()) if k not in comp_ba]
        for x, y in zip([k for k in xs if k not in comp_ab], ys):
            match_comps(x, y)
    drain()
    for x, c in enumerate(A.comps):
        y = B.comp_index.get(c.name)
        if x not in comp_ab and y is not None and y not in comp_ba:
            match_comps(x, y)
            drain()
    sigs: dict[tuple, list[int]] = {}
    for y, c in enumerate(B.comps):
        if y not in comp_ba:
            sigs.setdefault(_signature(B, c), []).append(y)
    for x, c in enumerate(A.comps):
        if x in comp_ab:
            continue
        for y in sigs.get(_signature(A, c), ()):
            if y not in comp_ba and _opcode_dice(c, B.comps[y]) >= 0.5:
                match_comps(x, y)
                drain()
                break

    # compare
    mods = _Modules(A, B, comp_ab, ig)
    results: list[ComputationDiff] = []
    for x, ca in enumerate(A.comps):
        y = comp_ab.get(x)
        if y is None:
            results.append(ComputationDiff(ca, None, removed=list(ca.instructions)))
            continue
        results.append(_compare_comp(mods, matchers[x]))
    for y, cb in enumerate(B.comps):
        if y not in comp_ba:
            results.append(ComputationDiff(None, cb, added=list(cb.instructions)))
    _find_moves(A, B, results)
    return DiffResult(a, b, ig, results, _module_changes(A, B, ig),
                      a_name or a.filename or "A", b_name or b.filename or "B")


def _find_moves(A: _Side, B: _Side, results: list[ComputationDiff]) -> None:
    """Unmatched instructions with the same node fingerprint on both sides, in different
    computations (fusion, call inlining and outlining move them): pair them in order as moves."""
    removed: dict[int, list[tuple[ComputationDiff, ir.Instruction]]] = {}
    for c in results:
        if c.removed:
            k = A.comp_index[c.a.name]
            for i in c.removed:
                if i.opcode != "parameter":
                    removed.setdefault(A.local[k][A.index[k][i.name]], []).append((c, i))
    if not removed:
        return
    gone_a: set[int] = set()
    gone_b: set[int] = set()
    for c in results:
        if not c.added:
            continue
        k = B.comp_index[c.b.name]
        for i in c.added:
            lst = removed.get(B.local[k][B.index[k][i.name]]) if i.opcode != "parameter" else None
            while lst:
                ca, x = lst.pop(0)
                if ca.a is c.a and c.a is not None:
                    continue  # same computation pair: not a move
                ca.moved_out.append((x, i, c.b.name))
                c.moved_in.append((i, x, ca.a.name))
                gone_a.add(id(x))
                gone_b.add(id(i))
                break
    for c in results:
        c.removed = [i for i in c.removed if id(i) not in gone_a]
        c.added = [i for i in c.added if id(i) not in gone_b]


def _signature(S: _Side, c: ir.Computation) -> tuple:
    params = tuple(S.shape_text(p.shape) for p in c.parameters())
    return (params, S.shape_text(c.root.shape) if c.instructions else "", c.is_entry)


def _opcode_dice(x: ir.Computation, y: ir.Computation) -> float:
    """Dice similarity of the opcode multisets of two computations."""
    from collections import Counter
    cx, cy = Counter(i.opcode for i in x.instructions), Counter(i.opcode for i in y.instructions)
    total = len(x.instructions) + len(y.instructions)
    return 2.0 * sum((cx & cy).values()) / total if total else 1.0


@dataclass
class _Modules:
    """Both modules as matched so far: what comparing a matched pair needs besides the pair."""
    a: _Side
    b: _Side
    comp_a_to_b: dict[int, int]  # matched computations, by index in a.comps -> index in b.comps
    ignore: frozenset


def _compare_comp(mods: _Modules, match: _Matcher) -> ComputationDiff:
    """The differences of one matched computation pair (its instructions matched by `match`)."""
    ca, cb = match.A.comps[match.ka], match.B.comps[match.kb]
    d = ComputationDiff(ca, cb)
    ia, ib = match.ia, match.ib
    for i, j in sorted(match.ab.items()):
        ins_a, ins_b = ia[i], ib[j]
        d.pairs.append((ins_a.name, ins_b.name))
        if ins_a.name != ins_b.name:
            d.renamed.append((ins_a.name, ins_b.name))
        changes = _compare_instr(mods, match, i, j)
        if changes:
            d.changed.append(InstructionChange(ins_a, ins_b, changes))
    d.matched = len(match.ab)
    d.removed = [ia[i] for i in range(len(ia)) if i not in match.ab]
    d.added = [ib[j] for j in range(len(ib)) if j not in match.ba]
    keys = list(dict.fromkeys(list(ca.attrs) + list(cb.attrs)))
    for key in keys:
        va, vb = ca.attrs.get(key), cb.attrs.get(key)
        if va != vb:
            d.attr_changes.append(Change("computation attribute", key,
                                         None if va is None else str(va), None if vb is None else str(vb)))
    if ca.is_entry != cb.is_entry:
        d.attr_changes.append(Change("entry", "ENTRY", str(ca.is_entry).lower(), str(cb.is_entry).lower()))
    return d


def _compare_instr(mods: _Modules, match: _Matcher, i: int, j: int) -> list[Change]:
    """The differences of matched instructions i (of A's computation) and j (of B's): opcode, shape,
    parameter number, root, operands (through the matching), literal, attributes (called
    computations through the computation matching)."""
    A, B = mods.a, mods.b
    ins_a, ins_b = match.ia[i], match.ib[j]
    out: list[Change] = []
    if ins_a.opcode != ins_b.opcode:
        out.append(Change("opcode", None, ins_a.opcode, ins_b.opcode))
    sa, sb = A.shape_text(ins_a.shape), B.shape_text(ins_b.shape)
    if sa != sb:
        out.append(Change("shape", None, sa, sb))
    if ins_a.parameter_number != ins_b.parameter_number:
        out.append(Change("parameter", None, str(ins_a.parameter_number), str(ins_b.parameter_number)))
    if ins_a.is_root != ins_b.is_root:
        out.append(Change("root", None, "ROOT" if ins_a.is_root else "not root",
                          "ROOT" if ins_b.is_root else "not root"))
    # operands, through the matching
    oa, ob = match.oa[i], match.ob[j]
    if len(oa) != len(ob) or any((match.ab.get(p) != q) if p >= 0 and q >= 0 else (na != nb)
                                 for p, q, na, nb in zip(oa, ob, ins_a.operands, ins_b.operands)):
        out.append(Change("operands", None, "(" + ", ".join("%" + o for o in ins_a.operands) + ")",
                          "(" + ", ".join("%" + o for o in ins_b.operands) + ")"))
    if (ins_a.literal is not None or ins_b.literal is not None) and ins_a.literal != ins_b.literal:
        out.append(Change("literal", None, _lit(ins_a.literal), _lit(ins_b.literal)))
    # attributes
    kinds = _kinds(ins_b.opcode)
    ig = mods.ignore
    keys = list(dict.fromkeys(list(ins_a.attrs) + list(ins_b.attrs)))
    for key in keys:
        if key == "metadata" and "metadata" in ig or key == "backend_config" and "backend_config" in ig:
            continue
        has_a, has_b = key in ins_a.attrs, key in ins_b.attrs
        kind = "generic" if key in ins_b.unknown_attrs or key in ins_a.unknown_attrs else kinds.get(key)
        if has_a and has_b and kind not in ("comp", "comps", "names") \
                and _equal(ins_a.attrs[key], ins_b.attrs[key]):
            continue
        if has_a and has_b and key == "backend_config" and _same_json(ins_a.attrs[key], ins_b.attrs[key]):
            continue  # the same JSON object: key order and spacing are the printer's, not the compiler's
        va = A.attr_value(ins_a, key, ins_a.attrs[key]) if has_a else None
        vb = B.attr_value(ins_b, key, ins_b.attrs[key]) if has_b else None
        if has_a and has_b and kind in ("comp", "comps"):
            na = [ins_a.attrs[key]] if kind == "comp" else list(ins_a.attrs[key])
            nb = [ins_b.attrs[key]] if kind == "comp" else list(ins_b.attrs[key])
            pa = [A.comp_index.get(n) for n in na]
            pb = [B.comp_index.get(n) for n in nb]
            mapped = [mods.comp_a_to_b.get(p) if p is not None else None for p in pa]
            if mapped == pb and None not in pb:
                # same computations: changed only if one of them differs
                if any(A.comp_fp[p] != B.comp_fp[q] for p, q in zip(pa, pb)):
                    out.append(Change("calls", key, va, vb, note="body changed"))
                continue
            out.append(Change("calls", key, va, vb))
            continue
        if has_a and has_b and kind == "names":  # instruction names (e.g. control-predecessors)
            ma = [match.ab.get(A.index[match.ka].get(n, -1)) for n in ins_a.attrs[key]]
            mb = [B.index[match.kb].get(n) for n in ins_b.attrs[key]]
            if sorted(map(str, ma)) != sorted(map(str, mb)):
                out.append(Change("attribute", key, va, vb))
            continue
        if va != vb:
            out.append(Change("attribute", key, va, vb))
    return out


def _json_value(v):
    """The parsed JSON of a backend_config value (a JSON text, or a string holding one); None otherwise."""
    text = getattr(v, "text", v)
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _same_json(x, y) -> bool:
    """Whether two backend_config values parse as JSON to the same value (objects compare without order)."""
    a = _json_value(x)
    return a is not None and a == _json_value(y)


def _equal(x, y) -> bool:
    try:
        return bool(type(x) is type(y) and x == y)
    except (TypeError, ValueError):  # values whose == is not a plain bool (arrays)
        return False


def _lit(lit: ir.Literal | None) -> str | None:
    return None if lit is None else _short(format_literal(lit), 120)


def _module_changes(A: _Side, B: _Side, ig) -> list[Change]:
    a, b = A.m, B.m
    kinds = {s.name: s.kind for s in HEADER_ATTRS}
    out = []

    def text(m: ir.Module, key: str):
        if key not in m.attrs:
            return None
        v = m.attrs[key]
        kind = kinds.get(key, "generic")
        if kind == "program_shape" and "layouts" in ig:
            return _program_shape_without_layouts(v)
        return P.attr_value_text(kind, v)

    for key in dict.fromkeys(list(a.attrs) + list(b.attrs)):
        ta, tb = text(a, key), text(b, key)
        if ta != tb:
            out.append(Change("header", key, ta, tb))
    if "metadata" not in ig and a.stack_frames != b.stack_frames:
        out.append(Change("stack frames", "stack frames", _tables_summary(a), _tables_summary(b)))
    return out


def _tables_summary(m: ir.Module) -> str:
    t = m.stack_frames
    return (f"{len(t.file_names)} files, {len(t.function_names)} functions, "
            f"{len(t.file_locations)} locations, {len(t.stack_frames)} frames")
