"""Evaluator kernels, one module per opcode family.  Importing this package registers them all
(see registry.py for the contract)."""
from . import registry  # noqa: F401

_FAMILIES = ("elementwise", "movement", "reduce", "dot", "control", "window", "gather_scatter", "sort",
             "fft", "linalg", "rng", "batchnorm", "async_ops", "dynamic", "ragged", "collectives",
             "custom_calls", "io", "shuffle")


def load_all() -> None:
    import importlib
    for fam in _FAMILIES:
        try:
            importlib.import_module(f"{__name__}.{fam}")
        except ModuleNotFoundError as e:  # a family not written yet
            if e.name != f"{__name__}.{fam}":
                raise
