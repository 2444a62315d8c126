"""XLA dump directories: what each file is, which modules a folder holds, and loading one of them.

`XLA_FLAGS=--xla_dump_to=DIR` writes files named

    module_0006.jit_f.before_optimizations.txt            the module as JAX handed it to XLA
    module_0006.jit_f.cpu_after_optimizations.txt         after XLA:CPU's pipeline (gpu_..., or none)
    module_0006.jit_f.0012.simplification.after_algsimp.before_dce.txt    one text per pass
                                                          (--xla_dump_hlo_pass_re=.*)
    module_0006.jit_f.before_optimizations.hlo.pb         the same as an HloModuleProto
                                                          (--xla_dump_hlo_as_proto)
    module_0006.jit_f.snapshot.-1016111714.pb             an HloSnapshot: module, arguments, result
                                                          (--xla_dump_hlo_snapshots)
    module_0006.jit_f.cpu_after_optimizations-buffer-assignment.txt, ...-memory-usage-report.txt,
    ...-live-range.txt, .debug_options, .ll, .o, module_0006.jit_f/module.mlir   not HLO

`classify(path)` names a file's role; `scan(dir)` groups a folder by module; `select(...)` and
`load(...)` give the commands one module (or a clear list of the choices).  No command-line code here:
errors are HloError / DumpError with a message meant for the user.
"""
from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Optional

from .diagnostics import HloError
from .records import record
from .frontend import MLIR_HINT, looks_like_mlir, mlir_error, parse_all_text, parse_text  # noqa: F401

# Kinds of files
HLO_TEXT, HLO_PROTO, SNAPSHOT, MLIR, REPORT, OTHER = "hlo", "proto", "snapshot", "mlir", "report", "other"

BEFORE, AFTER = "before_optimizations", "after_optimizations"

_PREFIX = re.compile(r"^module_(?P<id>\d+)\.(?P<name>[^.]+)\.(?P<rest>.+)$")
_STAGE = re.compile(r"^(?:(?P<backend>[a-z0-9]+)_)?(?P<stage>before_optimizations|after_optimizations)"
                    r"(?P<report>-[\w-]+)?(?P<ext>\.hlo\.pb|\.pb|\.txt|\.dot|\.html|\.url|\.hlo)?$")
_PASS = re.compile(r"^(?P<num>\d{4})\.(?P<pipeline>[^.]+)\.after_(?P<after>[^.]+)(?:\.before_(?P<before>[^.]+))?"
                   r"(?P<ext>\.hlo\.pb|\.pb|\.txt)$")
_SNAPSHOT = re.compile(r"^snapshot\.(?P<n>-?\d+)\.pb$")
_REPORT_EXT = (".ll", ".o", ".mlir", ".ptx", ".json", ".csv", ".dot", ".html", ".url", ".cubin", ".s")

# JAX's own small modules (jnp on host values, key creation, ...): not the user's program.
_JAX_HELPERS = (  # (compiled when first needed: start-up)
    r"^jit__|^jit_(convert_element_type|broadcast_in_dim|stage|iota|concatenate|reshape|squeeze|transpose|"
    r"dynamic_slice|dynamic_update_slice|gather|scatter\w*|select_n|copy|copy_p|pad|slice|integer_pow|"
    r"add|sub|mul|div|neg|exp|log|equal|ne|lt|le|gt|ge|max|min|reduce_\w+|argmax|argmin|clamp|sort|"
    r"fill|full|zeros|ones|eye|tri|where|_where|astype|abs|sign|floor|ceil|round|sqrt|rsqrt|"
    r"random_\w+|threefry\w*|true_divide|remainder|pow|dot_general|cumsum|cumprod|split|"
    r"expand_dims|clip|unstack|stack)$")


class DumpError(HloError):
    """A problem finding or choosing a module in a folder or a file (exit 2)."""


@record(frozen=True)
class DumpFile:
    path: Path
    kind: str                       # HLO_TEXT, HLO_PROTO, SNAPSHOT, MLIR, REPORT, OTHER
    module_id: Optional[int] = None
    module_name: Optional[str] = None
    stage: Optional[str] = None     # BEFORE, AFTER, or "pass NNNN" for a per-pass file
    backend: Optional[str] = None   # "cpu", "gpu", ... (the prefix of after_optimizations)
    pass_number: Optional[int] = None
    pipeline: Optional[str] = None
    after_pass: Optional[str] = None
    before_pass: Optional[str] = None
    what: str = ""                  # for reports: "buffer-assignment", "memory-usage-report", ...

    @property
    def is_module(self) -> bool:
        return self.kind in (HLO_TEXT, HLO_PROTO, SNAPSHOT)

    @property
    def stage_label(self) -> str:
        """'before_optimizations', 'cpu_after_optimizations', 'pass 0006 simplification/after_algsimp'."""
        if self.pass_number is not None:
            return f"pass {self.pass_number:04d} {self.pipeline}/after_{self.after_pass}"
        if self.stage == AFTER and self.backend:
            return f"{self.backend}_{AFTER}"
        return self.stage or ""


def classify(path) -> DumpFile:
    """What a file is, from its name (and, for names XLA does not use, its first bytes)."""
    p = Path(path)
    name = p.name
    m = _PREFIX.match(name)
    if m:
        mid, mname, rest = int(m.group("id")), m.group("name"), m.group("rest")
        base = dict(path=p, module_id=mid, module_name=mname)
        s = _STAGE.match(rest)
        if s:
            ext = s.group("ext") or ""
            info = dict(base, stage=s.group("stage"), backend=s.group("backend"))
            if s.group("report"):
                return DumpFile(kind=REPORT, what=s.group("report")[1:], **info)
            if ext == ".txt" or ext == ".hlo":
                return DumpFile(kind=HLO_TEXT, **info)
            if ext in (".hlo.pb", ".pb"):
                return DumpFile(kind=HLO_PROTO, **info)
            return DumpFile(kind=REPORT, what=ext.lstrip(".") or "stage", **info)
        s = _PASS.match(rest)
        if s:
            info = dict(base, stage=f"pass {s.group('num')}", pass_number=int(s.group("num")),
                        pipeline=s.group("pipeline"), after_pass=s.group("after"), before_pass=s.group("before"))
            return DumpFile(kind=HLO_TEXT if s.group("ext") == ".txt" else HLO_PROTO, **info)
        s = _SNAPSHOT.match(rest)
        if s:
            return DumpFile(kind=SNAPSHOT, what=s.group("n"), **base)
        if name.endswith(".mlir"):
            return DumpFile(kind=MLIR, **base)
        if p.suffix in (".txt", ".hlo", ".pb"):  # a name XLA does not write: look inside
            f = _sniff(p)
            if f.is_module:
                stage = rest[: -len(p.suffix)]
                return DumpFile(kind=f.kind, stage=stage, **base)
            return DumpFile(kind=f.kind, what=f.what, **base)
        return DumpFile(kind=REPORT, what=rest.rsplit(".", 1)[-1], **base)
    if name.endswith(".mlir"):
        return DumpFile(path=p, kind=MLIR)
    if p.suffix in (".hlo", ".txt", ".pb"):
        return _sniff(p)
    if name.endswith(_REPORT_EXT):
        return DumpFile(path=p, kind=REPORT, what=p.suffix.lstrip("."))
    return DumpFile(path=p, kind=OTHER)


def _sniff(p: Path) -> DumpFile:
    """A file not named the XLA way: HLO text, MLIR text, a proto, or something else."""
    try:
        with open(p, "rb") as f:
            head = f.read(20000)
    except OSError:
        return DumpFile(path=p, kind=OTHER)
    if p.suffix == ".pb":
        if b"snapshot" in p.name.encode():
            return DumpFile(path=p, kind=SNAPSHOT)
        return DumpFile(path=p, kind=HLO_PROTO)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not just a multibyte character cut at the end of the sample
            return DumpFile(path=p, kind=OTHER)
        text = head[:e.start].decode("utf-8")
    if looks_like_mlir(text):
        return DumpFile(path=p, kind=MLIR)
    if looks_like_hlo(text) or p.suffix == ".hlo":
        return DumpFile(path=p, kind=HLO_TEXT)
    return DumpFile(path=p, kind=REPORT, what="text")


def looks_like_hlo(text: str) -> bool:
    head = text[:20000]
    return "HloModule" in head or bool(re.search(r"^\s*ENTRY\b", head, re.M))


# StableHLO text given for HLO, and the parse that says so: hlo_interp/frontend.py


# --------------------------------------------------------------------------------------------------
# A folder

@record
class DumpModule:
    """One module of a dump folder (module_ID.NAME.*): its files by stage."""
    module_id: Optional[int]
    name: str
    texts: dict = field(default_factory=dict)     # stage label -> DumpFile (HLO text)
    protos: dict = field(default_factory=dict)    # stage label -> DumpFile (.pb)
    passes: list = field(default_factory=list)    # per-pass DumpFiles (text preferred), by number
    snapshots: list = field(default_factory=list)
    reports: list = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"module_{self.module_id:04d}.{self.name}" if self.module_id is not None else self.name

    @property
    def helper(self) -> bool:
        """A small module of JAX's own (jnp on host values, PRNG key creation), not the user's program."""
        return bool(re.match(_JAX_HELPERS, self.name))

    def stages(self) -> list[str]:
        """Stage labels present, in pipeline order (before, per-pass, after)."""
        labels = list(dict.fromkeys(list(self.texts) + list(self.protos)))
        return sorted(labels, key=lambda s: (s != BEFORE, s.endswith(AFTER), s))

    def file_for(self, stage: str) -> DumpFile:
        return self.texts.get(stage) or self.protos[stage]


@record
class Dump:
    root: Path
    modules: list                                   # DumpModule, by id then name
    skipped: list = field(default_factory=list)     # DumpFiles that hold no HLO module
    loose: list = field(default_factory=list)       # HLO files not named the XLA way

    def module_files(self) -> list[DumpFile]:
        """Every file holding a module (texts, protos, snapshots, per-pass files), sorted by path."""
        out = []
        for m in self.modules:
            out += list(m.texts.values()) + list(m.protos.values()) + m.snapshots
            out += [f for f in m.passes]
        out += self.loose
        return sorted(out, key=lambda f: str(f.path))


def scan(root) -> Dump:
    """Every file under root (recursively), grouped by module."""
    root = Path(root)
    by_key: dict = {}
    skipped, loose = [], []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        f = classify(p)
        if not f.is_module:
            skipped.append(f)
            continue
        if f.module_name is None:
            loose.append(f)
            continue
        m = by_key.setdefault((f.module_id, f.module_name), DumpModule(f.module_id, f.module_name))
        if f.kind == SNAPSHOT:
            m.snapshots.append(f)
        elif f.pass_number is not None:
            m.passes.append(f)
        elif f.kind == HLO_TEXT:
            m.texts[f.stage_label] = f
        else:
            m.protos[f.stage_label] = f
    for m in by_key.values():
        chosen: dict = {}
        for f in m.passes:  # one file per pass: the text if there is one, else the proto
            if f.pass_number not in chosen or f.kind == HLO_TEXT:
                chosen[f.pass_number] = f
        m.passes = [chosen[k] for k in sorted(chosen)]
    mods = sorted(by_key.values(), key=lambda m: (m.module_id if m.module_id is not None else -1, m.name))
    return Dump(root, mods, skipped, loose)


# --------------------------------------------------------------------------------------------------
# Choosing a module and a stage

def find_modules(dump: Dump, name: Optional[str]) -> list[DumpModule]:
    """The modules `name` designates: a module name (jit_f), its id (6, 0006, module_0006) or the full
    key (module_0006.jit_f); else a unique substring.  None: the user's modules (not JAX helpers)."""
    mods = dump.modules
    if name is None:
        mine = [m for m in mods if not m.helper]
        return mine or mods
    n = name.strip()
    idm = re.fullmatch(r"(?:module_)?(\d+)", n)
    exact = [m for m in mods if m.name == n or m.key == n or (idm and m.module_id == int(idm.group(1)))]
    if exact:
        return exact
    return [m for m in mods if n in m.key]


_STAGE_ALIASES = {"before": BEFORE, "before_optimizations": BEFORE, "pre": BEFORE, "unoptimized": BEFORE,
                  "after": AFTER, "after_optimizations": AFTER, "post": AFTER, "optimized": AFTER}


def find_stage(mod: DumpModule, stage: Optional[str]) -> DumpFile:
    """The file of one stage: before_optimizations / after_optimizations (any backend prefix) /
    cpu_after_optimizations / a pass number or pass name (first file after that pass) / 'snapshot'.
    Default: after_optimizations if present, else before_optimizations, else the last pass, else the
    first snapshot."""
    stages = mod.stages()
    if stage is None:
        for want in [s for s in stages if s.endswith(AFTER)] + [BEFORE]:
            if want in stages:
                return mod.file_for(want)
        if mod.passes:
            return mod.passes[-1]
        if mod.snapshots:
            return mod.snapshots[0]
        raise DumpError(f"module {mod.key} has no HLO text, proto or snapshot")
    s = stage.strip()
    canon = _STAGE_ALIASES.get(s.lower(), s)
    if canon in stages:
        return mod.file_for(canon)
    if canon == AFTER:
        hits = [x for x in stages if x.endswith(AFTER)]
        if len(hits) == 1:
            return mod.file_for(hits[0])
    if s.lower().startswith("snapshot"):
        if mod.snapshots:
            return mod.snapshots[0]
    if re.fullmatch(r"\d+", s):
        for f in mod.passes:
            if f.pass_number == int(s):
                return f
    for f in mod.passes:
        if s in (f.after_pass, f"after_{f.after_pass}"):
            return f
    have = stages + [f"{f.pass_number:04d} (after_{f.after_pass})" for f in mod.passes[:3]]
    if len(mod.passes) > 3:
        have.append(f"... {len(mod.passes)} pass files")
    if mod.snapshots:
        have.append("snapshot")
    raise DumpError(f"module {mod.key} has no stage '{stage}'; it has: {', '.join(have) or 'none'}")


def describe_choices(mods: list[DumpModule]) -> str:
    lines = []
    for m in mods:
        mark = "  (JAX helper)" if m.helper else ""
        lines.append(f"  {m.key}: {', '.join(m.stages()) or 'no HLO text'}"
                     + (f", {len(m.passes)} pass files" if m.passes else "")
                     + (f", {len(m.snapshots)} snapshot(s)" if m.snapshots else "") + mark)
    return "\n".join(lines)


def resolve(path: str, module: Optional[str] = None, stage: Optional[str] = None) -> DumpFile:
    """The one file a command should read for PATH (a file or a dump folder), --module and --stage."""
    p = Path(path)
    if path == "-" or not p.is_dir():
        if module is not None or stage is not None:
            raise DumpError("--module and --stage choose within a dump folder; "
                            f"{path} is a file", filename=path)
        return classify(p) if path != "-" else DumpFile(path=p, kind=HLO_TEXT)
    dump = scan(p)
    if not dump.modules:
        if len(dump.loose) == 1 and module is None:
            return dump.loose[0]
        raise no_module_error(dump, path)
    mods = find_modules(dump, module)
    if not mods:
        raise DumpError(f"no module '{module}' in this folder; it has:\n{describe_choices(dump.modules)}",
                        filename=path)
    if len(mods) > 1:
        what = f"'{module}' matches" if module else "it holds"
        raise DumpError(f"{what} {len(mods)} modules: choose one with --module NAME (name or id)\n"
                        f"{describe_choices(mods)}", filename=path)
    return find_stage(mods[0], stage)


def no_module_error(dump: Dump, path: str) -> DumpError:
    kinds = sorted({f.kind if f.kind != REPORT else (f.what or "report") for f in dump.skipped})
    has = f" (it has {len(dump.skipped)} other file(s): {', '.join(kinds[:6])})" if dump.skipped else " (it is empty)"
    mlir = [f for f in dump.skipped if f.kind == MLIR]
    hint = f"\n{MLIR_HINT}" if mlir else ""
    return DumpError(f"no HLO module found in this folder{has}{hint}", filename=path)


# --------------------------------------------------------------------------------------------------
# Loading

@record
class Loaded:
    """A module read from a text, a proto or a snapshot."""
    module: object                   # ir.Module
    name: str                        # display name (the path)
    file: DumpFile
    text: Optional[str] = None       # the source text (HLO text files only)
    arguments: Optional[list] = None  # snapshot: the recorded arguments (NumPy)
    result: Optional[list] = None     # snapshot: the recorded result leaves, if recorded


def load(f: DumpFile) -> Loaded:
    """Read one module file: HLO text, an HloModuleProto / HloProto (.pb) or an HloSnapshot."""
    name = "<stdin>" if str(f.path) == "-" else str(f.path)
    if f.kind in (HLO_PROTO, SNAPSHOT) or (f.kind == OTHER and str(f.path).endswith(".pb")):
        from .hloproto import read_proto_file
        name = str(f.path)
        text, args, result = read_proto_file(name)
        return Loaded(parse_text(text, name), name, f, text=None, arguments=args, result=result)
    from .diagnostics import read_source
    text, name = read_source(str(f.path))
    return Loaded(parse_text(text, name), name, f, text=text)


def load_path(path: str, module: Optional[str] = None, stage: Optional[str] = None,
              announce=None) -> Loaded:
    """resolve + load; announce(message) is told which file of a folder was taken."""
    f = resolve(path, module, stage)
    if announce is not None and Path(path).is_dir():
        announce(f"reading {f.path}")
    return load(f)


# --------------------------------------------------------------------------------------------------
# A folder at a glance (hlo info DIR)

def module_summary(mod: DumpModule) -> dict:
    """id, name, helper, stages present, instructions per stage, entry signature (of the latest stage
    read), snapshots, pass files; a stage that cannot be read says why instead of a count."""
    from .ir import shape_text
    counts: dict = {}
    signature = None
    for stage in mod.stages():
        try:
            m = load(mod.file_for(stage)).module
        except HloError as e:
            counts[stage] = f"error: {e.message}"
            continue
        counts[stage] = sum(len(c.instructions) for c in m.computations)
        entry = m.entry
        params = sorted(entry.parameters(), key=lambda p: p.parameter_number or 0)
        signature = ("(" + ", ".join(shape_text(p.shape, layouts=False) for p in params) + ") -> "
                     + shape_text(entry.root.shape, layouts=False))
    return {"id": mod.module_id, "name": mod.name, "key": mod.key, "helper": mod.helper,
            "stages": mod.stages(), "instructions": counts, "signature": signature,
            "snapshots": [str(f.path) for f in mod.snapshots], "pass_files": len(mod.passes)}


# --------------------------------------------------------------------------------------------------
# Two folders (hlo diff DIR_A DIR_B)

def pair_modules(a: Dump, b: Dump) -> list:
    """[(name, stage label, DumpFile in A or None, DumpFile in B or None)]: modules paired by name (not by
    their numbers, which differ between two runs), then by stage; a name present several times in one
    folder pairs in order of the ids."""
    def index(d: Dump) -> dict:
        out: dict = {}
        seen: dict = {}
        for m in d.modules:
            k = seen.get(m.name, 0)
            seen[m.name] = k + 1
            name = m.name if k == 0 else f"{m.name}#{k + 1}"
            for stage in m.stages():
                out[(name, _stage_key(stage))] = m.file_for(stage)
        return out
    ia, ib = index(a), index(b)
    keys = list(ia) + [k for k in ib if k not in ia]
    order = {BEFORE: 0}
    keys.sort(key=lambda k: (k[0], order.get(k[1], 1), k[1]))
    return [(name, stage, ia.get((name, stage)), ib.get((name, stage))) for name, stage in keys]


def _stage_key(label: str) -> str:
    """after_optimizations with any backend prefix pairs with itself (cpu_ vs none: same stage)."""
    return AFTER if label.endswith(AFTER) else label
