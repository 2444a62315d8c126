"""Multi-device programs: every device of an SPMD / multi-replica module simulated in one process.

    outs = run_spmd(module, per_device_inputs, replicas=N, partitions=M)
    # per_device_inputs[d] = the entry's arguments on device d; outs[d] = device d's result leaves

Device index d = replica * M + partition (XLA's logical device id, the one `use_global_device_ids`
groups name).  Each device runs its own Executable in its own thread; collectives (ops/collectives.py)
meet at a shared `Communicator`: every participant of a group hands in its value for one execution of
one collective instruction, and each gets all of them back in group order.  A program whose devices do
not all reach the same collective (different branches, a group naming a device that never comes) is a
deadlock: detected as soon as every unfinished device waits, it fails with an error located at the
collective instead of hanging (`timeout` seconds is an optional backstop); when one device fails, the
others stop at their next collective.

On a plain single-device run (`hlo_interp.run`) there is no Device: replica-id and partition-id are 0
and a collective whose group is only device 0 returns its own value; one needing other devices fails.

Global-view modules (what JAX emits before optimization for shard_map) run on plain global inputs:

    outs = run_global(module, x, w)

The shard_map boundaries (Shardy's `xla.sdy.GlobalToLocalShape` / `LocalToGlobalShape` custom calls
with their `xla.sdy.in_shardings` / `out_shardings` over the module's `xla.sdy.meshes`, or GSPMD's
`SPMDFullToShardShape` / `SPMDShardToFullShape` with `sharding={devices=[...]<=[N]}`) become private
opcodes: every simulated device runs the whole module, takes its shard at the way in and gathers every
device's shard at the way out; the sharding annotations in between (`Sharding`,
`xla.sdy.FuncResultSharding`) pass their value through.  Partly manual shard_maps (some mesh axes
automatic), sub-axes and explicit mesh device ids are refused with a located error.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any, Optional, Sequence

import numpy as np

from . import ir
from .diagnostics import HloError
from .ops.collectives import Device  # the simulated device kernels see (ctx.device)

__all__ = ["Device", "Communicator", "run_spmd", "run_global", "is_global_view", "module_device_counts",
           "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT: Optional[float] = None  # deadlocks are detected without one


class _Aborted(HloError):
    """Another device failed: this one stops at its next collective (not reported on its own; an
    HloError so that the evaluator lets it through unchanged)."""

    def __init__(self):
        super().__init__("stopped: another device failed")


class Communicator:
    """Where the devices' collectives meet.  Keyed by (instruction, execution count of that instruction
    on the device): the same collective run in a loop meets once per iteration.

    A deadlock (every device that has not finished is waiting at a collective that cannot complete:
    devices took different branches, a group names a device that never comes) is detected as soon as
    it happens, without waiting for a timeout; `timeout` (seconds, None = none) is only a backstop."""

    def __init__(self, num_devices: int, timeout: Optional[float] = DEFAULT_TIMEOUT):
        self.num_devices = num_devices
        self.timeout = timeout
        self._cond = threading.Condition()
        self._slots: dict[tuple, dict] = {}
        self._failed: Optional[BaseException] = None
        self._waiting = 0  # devices blocked in an incomplete collective
        self._finished = 0  # devices whose program has ended (or failed)
        self._where: dict[int, str] = {}  # device -> the collective it waits at

    def abort(self, exc: BaseException) -> None:
        with self._cond:
            if self._failed is None:
                self._failed = exc
            self._cond.notify_all()

    def finished(self, device: int) -> None:
        with self._cond:
            self._finished += 1
            self._cond.notify_all()

    def exchange(self, key: tuple, participants: tuple, me: int, value: Any, what: str = "") -> list:
        """Hand in `value` as device `me` of `participants`; returns every participant's value, in the
        order of `participants`.  Raises TimeoutError when they cannot all come."""
        n = len(participants)
        pos = participants.index(me)
        full_key = (key, participants)
        with self._cond:
            if self._failed is not None:
                raise _Aborted()
            slot = self._slots.get(full_key)
            if slot is None:
                slot = self._slots[full_key] = {"vals": {}, "taken": 0}
            if pos in slot["vals"]:
                raise RuntimeError(f"device {me} entered the same collective twice")
            slot["vals"][pos] = value
            if len(slot["vals"]) == n:
                self._waiting -= n - 1  # the others were all waiting for this one
                for p in participants:
                    self._where.pop(p, None)
                self._cond.notify_all()
            else:
                self._waiting += 1
                self._where[me] = what
                self._cond.notify_all()

                def ready():
                    return (len(slot["vals"]) == n or self._failed is not None
                            or self._waiting + self._finished >= self.num_devices)
                ok = self._cond.wait_for(ready, timeout=self.timeout)
                if len(slot["vals"]) != n:
                    self._waiting -= 1
                    if self._failed is not None:
                        self._where.pop(me, None)
                        raise _Aborted()
                    # (self._where[me] stays: the other devices of the deadlock say where this one is)
                    missing = [participants[k] for k in range(n) if k not in slot["vals"]]
                    states = []
                    for d in missing:
                        w = self._where.get(d)
                        states.append(f"device {d} waits at {w}" if w else f"device {d} has finished")
                    why = (f"device {me} waited {self.timeout:g} s for" if not ok
                           else f"deadlock: device {me} waits for")
                    err = TimeoutError(f"{why} device(s) {', '.join(map(str, missing))} of the group "
                                       f"{list(participants)}, which cannot come ({'; '.join(states)})")
                    # the others blocked in this deadlock stop too (each reports its own wait)
                    self._finished += 1
                    self._cond.notify_all()
                    raise err
            out = [slot["vals"][k] for k in range(n)]
            slot["taken"] += 1
            if slot["taken"] == n:
                del self._slots[full_key]
            return out


def module_device_counts(module: ir.Module) -> tuple[int, int]:
    """(replica_count, num_partitions) from the module header (1 when absent)."""
    attrs = getattr(module, "attrs", None) or {}
    r = attrs.get("replica_count", 1)
    p = attrs.get("num_partitions", 1)
    try:
        return max(int(r), 1), max(int(p), 1)
    except (TypeError, ValueError):
        return 1, 1


MAX_DEVICES = 1024  # each simulated device is a thread with its own copy of the program's state


def check_device_count(n_rep: int, n_part: int, per_device_bytes: int = 0, max_bytes: Optional[int] = None,
                       what: str = "", filename: Optional[str] = None) -> int:
    """replicas x partitions, refused up front (before any per-device state is built) when the
    simulation cannot hold it: more than MAX_DEVICES devices, or per-device inputs and results that
    together pass max_bytes."""
    if n_rep < 1 or n_part < 1:
        raise HloError(f"replicas and partitions must be at least 1 (got {n_rep} and {n_part})",
                       filename=filename)
    ndev = n_rep * n_part
    desc = f"{what}{n_rep} replica(s) x {n_part} partition(s) = {ndev} devices"
    if ndev > MAX_DEVICES:
        raise HloError(f"{desc}: more than the {MAX_DEVICES} devices the simulator runs (one thread and "
                       f"one copy of the program's state each)", filename=filename)
    if max_bytes is not None and per_device_bytes * ndev > max_bytes:
        raise HloError(f"{desc}: their inputs and results alone take {per_device_bytes * ndev} bytes, over "
                       f"the limit of {max_bytes} (max_bytes / --max-bytes)", filename=filename)
    return ndev


def run_spmd(module: Any, per_device_inputs: Sequence[Sequence[Any]], replicas: Optional[int] = None,
             partitions: Optional[int] = None, *, timeout: Optional[float] = DEFAULT_TIMEOUT,
             max_bytes: Optional[int] = None, max_iterations: Optional[int] = None,
             fake_constants: bool = False, validate: bool = False, denormals: str = "flush",
             computation: Optional[str] = None) -> list[list[np.ndarray]]:
    """Run `module` (an ir.Module or HLO text) on replicas x partitions simulated devices.
    `per_device_inputs[d]` holds device d's arguments (d = replica * partitions + partition); returns
    each device's result leaves.  replicas / partitions default to the module header's replica_count
    and num_partitions.  Raises HloError (the first failing device's error, naming the device)."""
    from . import evaluator
    if isinstance(module, str):
        from .frontend import parse_text
        module = parse_text(module)
    r0, p0 = module_device_counts(module)
    n_rep = r0 if replicas is None else int(replicas)
    n_part = p0 if partitions is None else int(partitions)
    opts = evaluator.make_options(max_bytes, max_iterations, fake_constants, validate, denormals)
    ndev = check_device_count(n_rep, n_part, filename=module.filename or None)
    per_device_inputs = list(per_device_inputs)
    if len(per_device_inputs) != ndev:
        raise HloError(f"{n_rep} replica(s) x {n_part} partition(s) = {ndev} device(s), but inputs were "
                       f"given for {len(per_device_inputs)}")
    comm = Communicator(ndev, timeout)
    devices = [Device(d // n_part, d % n_part, n_rep, n_part, comm) for d in range(ndev)]
    exes = [evaluator.Executable(module, opts, computation, dev) for dev in devices]
    values = [exe.prepare_inputs(*per_device_inputs[d]) for d, exe in enumerate(exes)]
    results: list[Any] = [None] * ndev
    errors: list[Optional[BaseException]] = [None] * ndev

    def work(d: int) -> None:
        try:
            results[d] = _finish(exes[d], values[d])
        except _Aborted as e:
            errors[d] = e
        except BaseException as e:  # noqa: BLE001 - reported below, located
            errors[d] = e
            if not _is_wait_error(e):  # a deadlock: the other waiters report their own side
                comm.abort(e)
        finally:
            comm.finished(d)

    # warnings.catch_warnings (inside Executable.execute) is not thread-safe: keep one around all
    # threads so that the process's filters are restored once they are done.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = [threading.Thread(target=work, args=(d,), name=f"hlo-device-{d}", daemon=True)
                   for d in range(ndev)]
        try:
            for t in threads:
                t.start()
        except RuntimeError as e:  # "can't start new thread": no memory (or thread limit) left
            comm.abort(HloError("stopped"))
            raise HloError(f"cannot start {ndev} device threads ({e}): run fewer replicas/partitions") from None
        for t in threads:
            while t.is_alive():  # (in slices: Ctrl-C stays responsive; the threads are daemons)
                t.join(0.25)
    for d, e in enumerate(errors):
        if e is not None and not isinstance(e, _Aborted):
            if isinstance(e, HloError):
                raise _with_device(e, devices[d]) from None
            raise HloError(f"device {d}: internal error: {type(e).__name__}: {e}") from None
    if any(e is not None for e in errors):  # pragma: no cover - aborted without a cause
        raise HloError("a device stopped without an error")
    return results


def _is_wait_error(e: BaseException) -> bool:
    return isinstance(e, HloError) and ("deadlock: device" in e.message or " waited " in e.message)


def _finish(exe: Any, values: list) -> list:
    from .evaluator import flatten_result, result_shape_error, value_mismatch
    value = exe.execute(*values)
    root = exe.entry.root
    bad = value_mismatch(value, root.shape) if root.shape is not None else None
    if bad:
        raise result_shape_error(exe.module, root, bad)
    return flatten_result(value)


def _with_device(e: HloError, dev: Device) -> HloError:
    e.message = f"device {dev.id} (replica {dev.replica}, partition {dev.partition}): {e.message}"
    e.args = (e.message,)
    return e


# --------------------------------------------------------------------------------------------------
# Global-view modules (what JAX emits before optimization for shard_map)

G2L, L2G = "xla.sdy.GlobalToLocalShape", "xla.sdy.LocalToGlobalShape"
G2L_OP, L2G_OP = "spmd-global-to-local", "spmd-local-to-global"  # private opcodes (ops/collectives.py)


GSPMD_F2S, GSPMD_S2F = "SPMDFullToShardShape", "SPMDShardToFullShape"


def is_global_view(module: ir.Module) -> bool:
    """True for a module with shard_map's boundaries: `xla.sdy.GlobalToLocalShape` custom calls
    (Shardy) or `SPMDFullToShardShape` ones (GSPMD)."""
    return any(i.opcode == "custom-call" and i.attrs.get("custom_call_target") in (G2L, GSPMD_F2S)
               for c in module.computations for i in c.instructions)


def _tiles(sharding: Any, err) -> tuple:
    """("tiles", tile dims, device order) of a GSPMD `sharding={devices=[8,1]<=[8]}` (a trailing
    replicated dimension with last_tile_dim_replicate)."""
    items = getattr(sharding, "items", None) or ()
    if len(items) == 1 and getattr(items[0], "text", None) == "replicated":
        return ("tiles", (), None)  # every device holds the whole value
    dev = None
    for it in items:
        if getattr(it, "key", None) == "devices":
            dev = it.value
        elif getattr(it, "text", None) not in ("last_tile_dim_replicate",):
            raise err(f"sharding {sharding} is not supported (only devices=[...]<=[N] tilings)")
    if dev is None or not hasattr(dev, "reshape_dims"):
        raise err(f"sharding {sharding} is not supported (only devices=[...]<=[N] tilings)")
    order = np.arange(int(np.prod(dev.reshape_dims))).reshape(dev.reshape_dims)
    if dev.transpose is not None:
        order = order.transpose(dev.transpose)
    return ("tiles", tuple(int(d) for d in dev.dims), tuple(int(x) for x in order.ravel()))


def _fa_text(v: Any) -> str:
    return v if isinstance(v, str) else getattr(v, "text", str(v))


def _meshes(module: ir.Module) -> dict:
    import re
    fa = (module.attrs.get("frontend_attributes") or {})
    text = _fa_text(fa.get("xla.sdy.meshes", "")) if isinstance(fa, dict) else ""
    out = {}
    for m in re.finditer(r'(\w+)\s*=\s*#sdy\.mesh<\[([^\]]*)\]([^>]*)>', text):
        if m.group(3).strip():
            raise HloError(f"sdy mesh '{m.group(1)}' with explicit device ids is not supported")
        axes = [(a, int(n)) for a, n in re.findall(r'"([^"]+)"\s*=\s*(\d+)', m.group(2))]
        out[m.group(1)] = axes
    return out


def _shardings(ins: ir.Instruction, key: str, meshes: dict, error) -> list:
    """[(mesh axes, [[axis names] per dim])] per value, from `#sdy.sharding_per_value<[...]>`."""
    import re
    fa = ins.attrs.get("frontend_attributes") or {}
    text = _fa_text(fa.get(key, "")) if isinstance(fa, dict) else ""
    vals = []
    for m in re.finditer(r'<@(\w+)\s*,\s*\[((?:\{[^}]*\}\s*,?\s*)*)\]([^>]*)>', text):
        mesh = meshes.get(m.group(1))
        if mesh is None:
            raise error(f"unknown sdy mesh '{m.group(1)}'")
        dims = []
        for d in re.findall(r'\{([^}]*)\}', m.group(2)):
            if ":" in d or "?" in d:
                raise error(f"sub-axes and open dimensions in shardings are not supported ({{{d}}})")
            dims.append(re.findall(r'"([^"]+)"', d))
        vals.append((mesh, dims))
    if not vals:
        raise error(f"no shardings in {key}")
    return vals


def prepare_global_view(module: ir.Module) -> tuple[ir.Module, int]:
    """A copy of `module` whose shard_map boundaries are the private opcodes the collectives kernels
    run (every device runs the whole module; global-to-local takes its shard, local-to-global gathers
    every device's), and the device count (the mesh's size)."""
    import dataclasses
    from .ops.registry import error_at
    meshes = _meshes(module)
    sizes = set()
    comps = []
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    for comp in module.computations:
        new = []
        for ins in comp.instructions:
            target = ins.attrs.get("custom_call_target") if ins.opcode == "custom-call" else None
            if target in (GSPMD_F2S, GSPMD_S2F):
                def err(msg, ins=ins):
                    return error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: {msg}")
                if len(ins.operands) != 1:
                    raise err("expected one operand")
                src = by_name.get(ins.operands[0]) if target == GSPMD_F2S else ins
                desc = _tiles(src.attrs.get("sharding") if src is not None else None, err)
                if desc[2] is not None:
                    sizes.add(len(desc[2]))
                ins = dataclasses.replace(ins, opcode=G2L_OP if target == GSPMD_F2S else L2G_OP,
                                          attrs={"sdy_shardings": (desc,)})
            elif target == "Sharding" and len(ins.operands) == 1:  # an annotation: the value itself
                ins = dataclasses.replace(ins, opcode="copy", attrs={})
            elif target in (G2L, L2G):
                def err(msg, ins=ins):
                    return error_at(ins, f"custom-call {ins.attrs.get('custom_call_target')}: {msg}")
                key = "xla.sdy.in_shardings" if target == G2L else "xla.sdy.out_shardings"
                vals = _shardings(ins, key, meshes, err)
                fa = ins.attrs.get("frontend_attributes") or {}
                manual = set(__import__("re").findall(r'"([^"]+)"', _fa_text(fa.get("xla.sdy.manual_axes", ""))))
                for mesh, _ in vals:
                    auto = [a for a, n in mesh if n > 1 and a not in manual]
                    if auto:
                        raise err(f"shard_map over part of the mesh (axes {auto} not manual) is not supported")
                    total = 1
                    for _, n in mesh:
                        total *= n
                    sizes.add(total)
                attrs = {"sdy_shardings": tuple((tuple(m), tuple(tuple(d) for d in dims)) for m, dims in vals)}
                ins = dataclasses.replace(ins, opcode=G2L_OP if target == G2L else L2G_OP, attrs=attrs)
            elif target == "xla.sdy.FuncResultSharding":  # a sharding annotation: the value itself
                if len(ins.operands) == 1 and not isinstance(ins.shape, ir.TupleShape):
                    ins = dataclasses.replace(ins, opcode="copy", attrs={})
                elif isinstance(ins.shape, ir.TupleShape) and len(ins.shape.elements) == len(ins.operands):
                    ins = dataclasses.replace(ins, opcode="tuple", attrs={})
            new.append(ins)
        comps.append(dataclasses.replace(comp, instructions=new))
    if len(sizes) > 1:
        raise HloError(f"shard_map meshes of different sizes {sorted(sizes)} in one module are not supported")
    ndev = sizes.pop() if sizes else 1
    check_device_count(1, ndev, what="the shard_map mesh: ", filename=module.filename or None)
    return dataclasses.replace(module, computations=comps), ndev


def run_global(module: Any, *arrays: Any, timeout: Optional[float] = DEFAULT_TIMEOUT, **options: Any) -> list:
    """Run a global-view module (shard_map before optimization) on plain global inputs: every device of
    the mesh is simulated; returns the global results (device 0's; every device computes them)."""
    if isinstance(module, str):
        from .frontend import parse_text
        module = parse_text(module)
    mod, ndev = prepare_global_view(module)
    outs = run_spmd(mod, [list(arrays) for _ in range(ndev)], 1, ndev, timeout=timeout, **options)
    return outs[0]
