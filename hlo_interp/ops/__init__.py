"""Evaluator kernels, one module per opcode family.  Each opcode's entry in the opcode table names the
module that registers its kernel (OpSpec.kernel_module); `load_all()` imports the modules the table
names (see registry.py for the kernel contract)."""
from . import registry  # noqa: F401


def kernel_modules() -> list[str]:
    """The kernel modules the opcode table names, in table order."""
    from ..opcodes import OPCODES
    return list(dict.fromkeys(o.kernel_module for o in OPCODES.values() if o.kernel_module))


def load_all() -> None:
    import importlib
    for name in kernel_modules():
        importlib.import_module(f"{__name__}.{name}")
