"""A cache of parsed and verified modules, and of their compiled plans, for repeated runs of the same
large HLO text.

Parsing and verifying a large dump costs seconds (a 10 MB post-optimization dump: about 4 s); loading
the module it gives back from a pickle costs a tenth of that.  Compiling the generated Python code of
its plans (hlo_interp.evaluator) is about 40% of building them; the code objects load back (marshal,
as .pyc files do) at a fraction of that.  hlo-run keeps one entry per text in the user's cache folder
($XDG_CACHE_HOME/hlo-interp, else ~/.cache/hlo-interp): KEY.pickle (the module, and whether it was
verified) and KEY.plans (compiled plan code by a digest of its source), read back when the same text
is run again.  `hlo check` keeps the findings of a text there too (KEY.check): checking it again
reads them back instead of parsing and verifying.  `hlo info` keeps its reports (KEY.info, the text or
JSON it printed, per set of options) the same way.

Safety:
  - an entry's key is a SHA-256 of the text's bytes, the name it was read under (error messages show
    it), the package's version, a fingerprint of the package's own source files (their sizes and
    modification times: an edited or reinstalled package never reads an older entry) and Python's
    version; the key is also written inside the entry and checked;
  - entries are written to a temporary file in the folder, then renamed: a reader sees a whole entry
    or none;
  - an entry that cannot be read back (damaged, truncated, from another version, naming a class
    outside hlo_interp/NumPy/ml_dtypes) is deleted and ignored: the text is parsed again and the entry
    rewritten; the cache never changes what a run does, only how long it takes;
  - a cache folder not owned by the user, or that others may write to, is not used;
  - the folder is kept under MAX_BYTES (oldest entries go first; a hit counts as a use).
Only texts of at least MIN_BYTES are cached unless asked (HLO_INTERP_CACHE=1 or --cache): small ones
parse in milliseconds, and caching every small text a test suite or a script runs would only churn the
folder.  HLO_INTERP_CACHE=0 (or --no-cache) turns the cache off.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

from . import ir
from .types import PrimitiveType, primitive_type
from .version import __version__

ENV = "HLO_INTERP_CACHE"   # "0": off; "1": on for texts of any size; unset: on for texts >= MIN_BYTES
MIN_BYTES = 256 << 10
MAX_BYTES = 1 << 30        # the whole folder
_FORMAT = b"hlo-interp module cache 1\n"
_KINDS = (".pickle", ".plans", ".check", ".info")  # the module, its plans' code, check's findings, info's reports
_TRUSTED = ("hlo_interp.", "numpy.", "ml_dtypes.")
_TRUSTED_EXACT = {"numpy", "ml_dtypes", "copyreg", "collections", "_codecs"}
_BUILTINS = {"set", "frozenset", "slice", "complex", "range", "bytearray", "tuple", "list", "dict", "int",
             "float", "str", "bytes", "bool", "object"}


def default_directory() -> Path:
    """$XDG_CACHE_HOME/hlo-interp/modules (XDG_CACHE_HOME defaults to ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "hlo-interp" / "modules"


def wanted(size: int, choice: Optional[bool] = None) -> bool:
    """Whether a text of `size` bytes goes through the cache: `choice` (--cache / --no-cache) first, then
    HLO_INTERP_CACHE, then the size."""
    if choice is not None:
        return choice
    env = os.environ.get(ENV, "").strip()
    if env == "0":
        return False
    if env == "1":
        return True
    return size >= MIN_BYTES


def for_file(path: str, choice: Optional[bool] = None):
    """For a command that reads the module text file `path`: (cache, key, (module, verified) or None)
    when the file goes through the cache (a regular file, not a .pb proto, of a size `wanted`), else
    None.  On a miss the caller parses the text as usual and stores the module under the key of the
    text's bytes: cache.put(cache.key(text.encode("utf-8"), path), module, verified)."""
    found = for_path(path, choice)
    if found is None:
        return None
    cache, key = found
    return cache, key, cache.get(key)


def for_path(path: str, choice: Optional[bool] = None):
    """(cache, key) for the module text file `path` when it goes through the cache (as for_file), else
    None; the file is read (and hashed) here."""
    import stat

    from .diagnostics import MAX_MODULE_BYTES
    if path == "-" or path.lower().endswith(".pb"):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None  # (the command's own reading says what is wrong)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_MODULE_BYTES or not wanted(st.st_size, choice):
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(st.st_size + 1)  # (a read of MAX_MODULE_BYTES would allocate that much at once)
    except (OSError, MemoryError):
        return None
    cache = ModuleCache()
    return cache, cache.key(data, path)


def for_data(path: str, data, choice: Optional[bool] = None):
    """For a command that has just read the text file `path` (its bytes `data`): (cache, key) when the
    text goes through the cache (a regular file, not a .pb proto, of a size `wanted`), else None."""
    import stat
    if path == "-" or path.lower().endswith(".pb") or not wanted(len(data), choice):
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except OSError:
        return None
    cache = ModuleCache()
    return cache, cache.key(data, path)


_CODE_STAMP: Optional[bytes] = None


def _code_stamp() -> bytes:
    """The package's source files by name, size and modification time (once per process)."""
    global _CODE_STAMP
    if _CODE_STAMP is None:
        import hashlib
        h = hashlib.sha256()
        root = os.path.dirname(os.path.abspath(__file__))
        todo = [root]
        while todo:
            d = todo.pop()
            try:
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        todo.append(e.path)
                elif e.name.endswith((".py", ".lark")):
                    st = e.stat()
                    h.update(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        _CODE_STAMP = h.digest()
    return _CODE_STAMP


def _reduce_primitive_type(t: PrimitiveType):
    return primitive_type, (t.name,)  # the one object of that type, not a copy (code compares with `is`)


def _unpickle(f) -> Any:
    """pickle.load, refusing any global outside the package, NumPy, ml_dtypes and plain containers."""
    import pickle

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str):
            if module.startswith(_TRUSTED) or module in _TRUSTED_EXACT or (module == "builtins" and name in _BUILTINS):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"{module}.{name} is not a class a module cache entry may name")
    return Unpickler(f).load()


class ModuleCache:
    """Entries (module, verified) and compiled plan code, keyed by text; see the module's docstring."""

    def __init__(self, directory: Optional[Path] = None, max_bytes: int = MAX_BYTES):
        self.directory = Path(directory) if directory is not None else default_directory()
        self.max_bytes = max_bytes

    @staticmethod
    def key(data: bytes, name: str) -> str:
        import hashlib
        h = hashlib.sha256(_FORMAT)
        h.update(f"{__version__}\0{sys.version}\0{name}\0".encode("utf-8", "surrogateescape"))
        h.update(_code_stamp())
        h.update(data)
        return h.hexdigest()

    def _path(self, key: str, kind: str = "pickle") -> Path:
        return self.directory / f"{key}.{kind}"

    def _usable(self, create: bool) -> bool:
        """The folder exists (made when `create`), is ours and only we may write to it."""
        d = self.directory
        try:
            if create:
                d.mkdir(parents=True, exist_ok=True, mode=0o700)
            st = d.stat()
        except OSError:
            return False
        return st.st_uid == os.getuid() and not (st.st_mode & 0o022)

    def get(self, key: str) -> Optional[tuple[Any, bool]]:
        """(module, verified) stored under `key`, or None (absent, or unreadable: then removed)."""
        path = self._path(key)
        if not self._usable(create=False):
            return None
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        head = _FORMAT + key.encode() + b"\n"
        try:
            if not data.startswith(head):
                raise ValueError("not an entry for this key")
            with ir.gc_paused():  # millions of objects, nothing cyclic to free meanwhile
                import io
                f = io.BytesIO(data)  # (shares the bytes: no copy)
                f.seek(len(head))
                entry = _unpickle(f)
            module, verified = entry
            if not isinstance(module, ir.Module) or not isinstance(verified, bool):
                raise ValueError("not a module")
        except Exception:  # noqa: BLE001 - any damage: drop the entry, parse again
            self._remove(path)
            self._remove(self._path(key, "plans"))
            return None
        try:
            os.utime(path)  # used now: the last to go when the folder is trimmed
        except OSError:
            pass
        return module, verified

    def put(self, key: str, module: Any, verified: bool) -> bool:
        """Store (module, verified) under `key`; False (and nothing stored) when it cannot be."""
        if not self._usable(create=True):
            return False
        import copyreg
        import gc
        import io
        import pickle
        buf = io.BytesIO()
        buf.write(_FORMAT + key.encode() + b"\n")
        p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
        p.dispatch_table = dict(copyreg.dispatch_table)
        p.dispatch_table[PrimitiveType] = _reduce_primitive_type
        was = gc.isenabled()
        gc.disable()  # the pickler's memo grows by an entry per object: nothing for the collector to find
        try:
            p.dump((module, verified))
        except Exception:  # noqa: BLE001 - something in the module that does not pickle: not cached
            return False
        finally:
            if was:
                gc.enable()
        return self._write(self._path(key), buf.getbuffer())

    def get_plans(self, key: str) -> dict:
        """The compiled plan code stored under `key` ({digest: code object}); {} when there is none (or
        it cannot be read back: then it is removed)."""
        code = self.get_record(key, "plans")
        if code is not None and not isinstance(code, dict):
            self._remove(self._path(key, "plans"))
        return code if isinstance(code, dict) else {}

    def put_plans(self, key: str, code: dict) -> bool:
        """Store compiled plan code ({digest: code object}) under `key`."""
        return self.put_record(key, "plans", code)

    def get_record(self, key: str, kind: str):
        """The value (plain data or code, as marshal stores them) stored as `kind` under `key`: the
        plans' code ("plans"), a check's findings ("check"); None when there is none (or it cannot be
        read back: then it is removed)."""
        import marshal
        path = self._path(key, kind)
        if not self._usable(create=False):
            return None
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        head = _FORMAT + key.encode() + b"\n"
        try:
            if not data.startswith(head):
                raise ValueError("not an entry for this key")
            value = marshal.loads(memoryview(data)[len(head):])
        except Exception:  # noqa: BLE001 - damaged: made again
            self._remove(path)
            return None
        return value

    def put_record(self, key: str, kind: str, value) -> bool:
        """Store `value` (what marshal stores: plain data, code objects) as `kind` under `key`."""
        import marshal
        if not self._usable(create=True):
            return False
        try:
            data = _FORMAT + key.encode() + b"\n" + marshal.dumps(value)
        except ValueError:
            return False
        return self._write(self._path(key, kind), data)

    def _write(self, path: Path, data) -> bool:
        """Write through a temporary file and a rename (readers see the whole file or none)."""
        import tempfile
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=".entry.", suffix=".tmp", dir=self.directory)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError:
            return False
        finally:
            if tmp is not None:
                self._remove(Path(tmp))
        self.trim(keep=str(path))
        return True

    def trim(self, keep: Optional[str] = None) -> None:
        """Remove the least recently used entries until the folder holds at most max_bytes, but never
        the file `keep` (the entry just written), and leftover temporary files of writers that died."""
        import time
        try:
            entries = []
            for e in os.scandir(self.directory):
                if not e.is_file(follow_symlinks=False):
                    continue
                st = e.stat(follow_symlinks=False)
                if e.name.endswith(".tmp"):
                    if st.st_mtime < time.time() - 3600:
                        self._remove(Path(e.path))
                    continue
                if e.name.endswith(_KINDS) and e.path != keep:
                    entries.append((st.st_mtime, st.st_size, e.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        if keep is not None:
            try:
                total += os.stat(keep).st_size
            except OSError:
                pass
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            self._remove(Path(path))
            total -= size

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass
