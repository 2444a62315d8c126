"""`hlo bisect DIR`: the first compiler pass after which a module's results leave tolerance
(argument handling and presentation only; the work is hlo_interp.bisect)."""
from __future__ import annotations

import sys

import click

from .cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, report_error
from .diagnostics import HloError
from .files import InputError


def _judge(rtol, atol, reference_module):
    """hlo-run --compare's rule (hlo_interp.compare), for result leaves (with the reference module's
    numerics: its precision and longest reductions) and for single values."""
    from .debug import array_type_text
    from .compare import compare_leaf, leaf_numerics
    numerics = leaf_numerics(reference_module)

    def judge(leaves, ref):
        if len(leaves) != len(ref):
            return False, [f"{len(leaves)} result leaves, the reference has {len(ref)}"]
        ok_all, lines = True, []
        for k, (a, e) in enumerate(zip(leaves, ref)):
            r = compare_leaf(a, e, rtol, atol, numerics=numerics[k] if k < len(numerics) else None)
            ok_all &= r.ok
            lines.append(f"{'ok' if r.ok else 'MISMATCH'} out{k} {array_type_text(a)}: {r.line}")
        return ok_all, lines

    def value_judge(got, want):
        r = compare_leaf(got, want, rtol, atol)
        return r.ok, [r.line]
    return judge, value_judge


@click.command("bisect", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--module", "module_name", metavar="NAME", default=None,
              help="The module to bisect (name or id) when the folder holds several with pass files.")
@click.option("-i", "--inputs", "inputs", metavar="ARGS.npz", default=None,
              help="Arguments: one .npz with keys arg0, arg1, ..., parameter names or JAX argument paths "
                   "[default: the module's snapshot, if the dump has one].")
@click.option("--random-inputs", is_flag=True, help="Random arguments (floats N(0,1), small integers).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --random-inputs.")
@click.option("--rtol", type=float, default=None, help="Relative tolerance (hlo-run --compare's rule by default).")
@click.option("--atol", type=float, default=None, help="Absolute tolerance (hlo-run --compare's rule by default).")
@click.option("-v", "--verbose", is_flag=True, help="Print each text's comparison as it is run.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(folder, module_name, inputs, random_inputs, seed, rtol, atol, verbose, color):
    """Name the first compiler pass after which a module's results leave tolerance.

    FOLDER is a per-pass dump: XLA_FLAGS="--xla_dump_to=FOLDER --xla_dump_hlo_pass_re=.*" writes the
    module after every pass that changed it, between its before_optimizations and after_optimizations
    texts.  The first text's results are the reference; the last text is run, and when its results
    leave tolerance the pass sequence is bisected (about log2(passes) runs) for the first text out of
    tolerance.  Then: the pass's name, what it changed (hlo diff of the texts before and after it) and
    the first value that parts (the first instruction of the entry present in both texts whose value
    differs beyond tolerance).

    \b
    Exit status: 0 all texts agree, 1 a pass changed the results, 2 usage or input error.

    \b
    Example:
      XLA_FLAGS="--xla_dump_to=d --xla_dump_hlo_pass_re=.*" python model.py
      hlo bisect d/ --module jit_step --inputs args.npz
    """
    from .bisect import bisect_passes, label, pass_sequence
    from .dumps import find_modules, scan
    if inputs and random_inputs:
        raise click.UsageError("give --inputs or --random-inputs, not both")
    try:
        dump = scan(folder)
        mods = [m for m in find_modules(dump, module_name) if m.passes] if dump.modules else []
        if not mods:
            what = f"module '{module_name}'" if module_name else "module"
            raise HloError(f"no {what} with per-pass texts in this folder: dump with "
                           f"XLA_FLAGS=\"--xla_dump_to={folder} --xla_dump_hlo_pass_re=.*\"", filename=folder)
        if len(mods) > 1:
            from .dumps import describe_choices
            raise HloError(f"{len(mods)} modules have per-pass texts: choose one with --module NAME\n"
                           f"{describe_choices(mods)}", filename=folder)
        mod = mods[0]
        seq = pass_sequence(mod)
        make_args = _arguments(mod, inputs, random_inputs, seed)
        from .dumps import load
        judge, value_judge = _judge(rtol, atol, load(seq[0]).module)
        sys.stdout.write(f"module {mod.key}: {len(seq)} texts ({label(seq[0])} ... {label(seq[-1])}); "
                         f"reference: {label(seq[0])}\n")

        def progress(st):
            tag = "ok" if st.ok else "out of tolerance"
            sys.stdout.write(f"  ran {label(st.file):60s} {tag}\n")
            if verbose or st.error:
                for line in ([st.error] if st.error else st.lines):
                    sys.stdout.write(f"      {line}\n")
        res = bisect_passes(seq, make_args, judge, value_judge, progress)
    except (HloError, InputError) as e:
        report_error(e if isinstance(e, HloError) else HloError(str(e)), color)
        sys.exit(EXIT_ERROR)
    if res.culprit is None:
        sys.stdout.write(f"the last text agrees with the first within tolerance: no pass changed the results "
                         f"({len(res.steps)} text(s) run)\n")
        sys.exit(EXIT_OK)
    f = seq[res.culprit]
    prev = seq[res.culprit - 1]
    where = f" (pipeline {f.pipeline})" if f.pipeline else ""
    sys.stdout.write(f"\nfirst pass after which the results leave tolerance: {res.pass_name}{where}\n"
                     f"  before: {prev.path}\n  after:  {f.path}\n")
    step = next(s for s in res.steps if s.index == res.culprit)
    for line in ([step.error] if step.error else step.lines):
        sys.stdout.write(f"  {line}\n")
    sys.stdout.write(f"\nwhat {res.pass_name} changed (hlo diff, metadata ignored):\n")
    for line in res.diff.to_text(verbose=False).rstrip("\n").split("\n"):
        sys.stdout.write(f"  {line}\n")
    d = res.divergence
    if d is not None:
        from .syntax.printer import instruction_text
        sys.stdout.write(f"\nfirst diverging value: %{d.instruction.name} ({d.instruction.opcode}) of the entry\n"
                         f"  {instruction_text(d.instruction)}\n")
        for line in d.lines:
            sys.stdout.write(f"  {line} (after the pass vs before it)\n")
        if d.new_operands:
            sys.stdout.write(f"  its operand(s) new in this pass: {', '.join('%' + o for o in d.new_operands)}\n")
    else:
        sys.stdout.write("\nno instruction present in both texts differs beyond tolerance: the change is in "
                         "instructions the pass added or renamed (listed above)\n")
    sys.exit(EXIT_FINDINGS)


def _arguments(mod, inputs, random_inputs, seed):
    """make_args(params) for every text of the sequence (their parameters are the same)."""
    from .cli_run import gather_inputs
    if random_inputs:
        import numpy as np
        from .ops.random_values import random_value

        def make(params):
            rng = np.random.default_rng(seed)
            return [random_value(p.shape, rng) for p in params]
        return make
    if inputs:
        return lambda params: gather_inputs([inputs], params)
    if mod.snapshots:
        from .dumps import load
        snap = load(mod.snapshots[0])
        sys.stderr.write(f"hlo bisect: inputs from {snap.name}\n")
        return lambda params: list(snap.arguments)

    def none(params):
        if params:
            raise InputError(f"the module takes {len(params)} parameter(s): give --inputs ARGS.npz or "
                             f"--random-inputs")
        return []
    return none
