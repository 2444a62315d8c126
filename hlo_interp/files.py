"""Array files and atomic writes: one place for what the commands read and write.

- load_arrays: .npy / .npz as hlo-run takes them (ml_dtypes types by name, and np.save's raw '|V' or
  '<f1' descriptors as raw bytes the evaluator views as the parameter's type); every problem is an
  InputError that names the file, never a NumPy traceback.
- npy_bytes / save_arrays: .npy / .npz that keep bf16 and f8 types (descr = the ml_dtypes name, so
  np.load after `import ml_dtypes` gives the real dtype back).
- write_atomic: a temporary file in the same folder, then a rename: never a half-written output.
"""
from __future__ import annotations

import ast
import io
import os
import re
import sys
import zlib
from typing import TYPE_CHECKING, Any, Callable, Union

from .diagnostics import HloError

if TYPE_CHECKING:
    import zipfile


class InputError(ValueError):
    """A problem with the command's files or options (not located in the module)."""


# --------------------------------------------------------------------------------------------------
# Reading

def _parse_npy(data: bytes, name: str):
    """Our own reader for .npy bytes NumPy refuses (e.g. np.save's '<f1' for float8_e5m2): an array of
    raw bytes (|Vn) that the evaluator then views as the parameter's type."""
    import numpy as np
    if data[:6] != b"\x93NUMPY" or len(data) < 10:
        raise InputError(f"{name}: not a NumPy .npy array")
    major = data[6]
    if major == 1:
        hlen, start = int.from_bytes(data[8:10], "little"), 10
    else:
        hlen, start = int.from_bytes(data[8:12], "little"), 12
    try:
        header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
        descr, fortran, shape = header["descr"], header["fortran_order"], tuple(header["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError):
        raise InputError(f"{name}: damaged .npy header") from None
    if not isinstance(fortran, bool) or not all(type(d) is int and d >= 0 for d in shape):
        raise InputError(f"{name}: damaged .npy header (shape {shape!r}, fortran_order {fortran!r})")
    try:
        dtype = np.dtype(descr)
    except TypeError:
        m = re.fullmatch(r"[<>|=]?[a-zA-Z](\d+)", str(descr))
        if not m:
            raise InputError(f"{name}: unknown element type {descr!r}") from None
        dtype = np.dtype(f"V{m.group(1)}")
    if dtype.hasobject:
        raise InputError(f"{name}: arrays of Python objects are not accepted")
    count = 1
    for d in shape:
        count *= d
    body = data[start + hlen:]
    if len(body) < count * dtype.itemsize:
        raise InputError(f"{name}: file is truncated")
    arr = np.frombuffer(body, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C")


def _load_npy_bytes(data: bytes, name: str):
    import numpy as np
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as e:
        if "pickle" in str(e).lower():
            raise InputError(f"{name}: arrays of Python objects are not accepted") from None
    except (TypeError, EOFError, OSError, MemoryError):
        pass
    return _parse_npy(data, name)  # what NumPy refuses: our reader, which says what is wrong


def _stored_npy(data: bytearray, info: zipfile.ZipInfo):
    """The array of an uncompressed .npz member (np.savez's), as a view of the file's bytes: no copy
    (the arrays of a large input file are not copied three times over).  Its CRC is checked as
    zipfile would.  None for anything else (compressed, an unusual header, a type NumPy does not
    know): the general reader handles those, and their errors."""
    import zipfile

    import numpy as np
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        return None
    off = info.header_offset
    local = bytes(data[off:off + 30])
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        return None
    start = off + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
    end = start + info.compress_size
    if end > len(data):
        return None
    body = memoryview(data)[start:end]
    if zlib.crc32(body) != info.CRC:
        return None  # (the general reader reports the damage)
    try:
        head = io.BytesIO(body[:min(len(body), 1 << 16)])
        version = np.lib.format.read_magic(head)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(head)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(head)
        else:
            return None
    except (ValueError, TypeError, OSError, SyntaxError):
        return None
    if dtype.hasobject:
        return None
    count = 1
    for d in shape:
        count *= d
    if head.tell() + count * dtype.itemsize != len(body):
        return None
    a = np.frombuffer(data, dtype=dtype, count=count, offset=start + head.tell())
    return a.reshape(shape[::-1]).transpose() if fortran else a.reshape(shape)


def _read_whole(f, limit: int):
    """A regular file of at most `limit` bytes read in one go into a buffer of its size (no chunks
    joined, no regrowing); None for anything else (a pipe, a device, a larger file, a file that grew):
    then read_limited reads it, from the start, and bounds it."""
    import stat
    try:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit or f.tell() != 0:
            return None
        data = bytearray(st.st_size)
        n = f.readinto(data)
        if n == st.st_size and not f.read(1):
            return data
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
    f.seek(0)
    return None


def half_of_memory() -> int:
    """Half of the machine's memory (MemTotal), or 8 GiB when it cannot be read: the default bound on
    what one run may allocate or read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024 // 2
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 << 30


_HEADER_SLACK = 1 << 20  # .npy headers and zip directories, beyond the arrays' own bytes


def load_arrays(path, max_bytes: "int | None" = None,
                member_limit: "Callable[[str], int | None] | None" = None,
                expect_bytes: "int | None" = None) -> "dict[str, Any] | Any":
    """A .npy file -> an array; a .npz file -> {key: array}.  ml_dtypes element types (bf16, f8, ...) come
    back as themselves; an unreadable or damaged file is an InputError naming it.

    Bounded before anything is allocated: a file larger than max_bytes (default: half the memory; an
    endless stream such as /dev/zero) is refused while it is read, and a .npz member whose declared
    uncompressed size passes member_limit(key) (the bytes its parameter needs; None: max_bytes) is
    refused before it is inflated (zip bombs).  expect_bytes: what the arrays the caller wants take
    (a parameter's bytes): the file is not read past it (plus headers) either."""
    limit = half_of_memory() if max_bytes is None else int(max_bytes)
    if expect_bytes is not None:
        limit = min(limit, int(expect_bytes))
    from .diagnostics import TooLarge, read_limited
    try:
        with open(path, "rb") as f:
            data = _read_whole(f, limit + _HEADER_SLACK)
            if data is None:
                data = read_limited(f, limit + _HEADER_SLACK)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    except TooLarge:
        what = "what the parameters need" if expect_bytes is not None and limit == expect_bytes else "the limit"
        raise InputError(f"{path}: larger than {what} ({limit} bytes, --max-bytes): refused") from None
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        import zipfile  # (here, not at import: check and info end through end_process, start-up time)
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                out = {}
                members = z.infolist()
                total = 0
                for info in members:
                    key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                    allowed = member_limit(key) if member_limit is not None else None
                    allowed = limit if allowed is None else min(int(allowed), limit)
                    total += info.file_size
                    if info.file_size > allowed + _HEADER_SLACK or total > limit + _HEADER_SLACK:
                        raise InputError(f"{path}[{key}]: declares {info.file_size} bytes uncompressed, more "
                                         f"than {'its parameter needs' if allowed < limit else 'the limit'} "
                                         f"({allowed} bytes): refused before inflating it")
                for info in members:
                    key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                    a = _stored_npy(data, info)
                    out[key] = a if a is not None else _load_npy_bytes(z.read(info), f"{path}[{key}]")
                return out
        except InputError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError, RuntimeError,
                ValueError) as e:  # broken archive, bad deflate data, unsupported compression, encryption
            raise InputError(f"{path}: damaged .npz file ({e})") from None
    if data[:6] == b"\x93NUMPY":
        return _load_npy_bytes(data, path)
    raise InputError(f"{path}: not a NumPy .npy or .npz file")


def npy_bytes(a) -> bytes:
    """.npy bytes; ml_dtypes types get their name as descr so that np.load (with ml_dtypes imported)
    gives back the real dtype instead of raw bytes."""
    import numpy as np
    a = np.asarray(a)
    buf = io.BytesIO()
    descr = np.lib.format.dtype_to_descr(a.dtype)
    try:
        roundtrips = np.dtype(descr) == a.dtype
    except TypeError:
        roundtrips = False
    if roundtrips:
        np.lib.format.write_array(buf, a, allow_pickle=False)
    else:
        np.lib.format.write_array_header_1_0(
            buf, {"descr": a.dtype.name, "fortran_order": False, "shape": a.shape})
        buf.write(np.ascontiguousarray(a).tobytes())
    return buf.getvalue()


# --------------------------------------------------------------------------------------------------
# Writing

def write_atomic(path, data: Union[bytes, str, Callable[[Any], None]]) -> None:
    """Write `data` (bytes, text as UTF-8, or a function given the open binary file) to `path` via a
    temporary file in the same folder, flushed to disk (fsync), then a rename: readers never see a
    half-written file, and a failure leaves the old file (if any) as it was, with the temporary file
    removed.  A symbolic link is followed (its target is what gets written, the link stays), and a
    file with several hard links is rewritten in place from the finished temporary file, so that every
    link sees the new content.  An existing file keeps its permissions; a new one gets the umask's.
    OSError becomes an HloError naming the file."""
    path = str(path)
    if os.path.islink(path):
        path = os.path.realpath(path)
    folder = os.path.dirname(path) or "."
    import tempfile
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise HloError(f"cannot write: {e.strerror or e}", filename=path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and st.st_nlink > 1:
            _rewrite_in_place(tmp, path)
            os.unlink(tmp)
            return
        if st is not None:
            os.chmod(tmp, st.st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
        _fsync_folder(folder)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not isinstance(e, BrokenPipeError):
            raise HloError(f"cannot write: {e.strerror or e}", filename=path) from None
        raise


def _rewrite_in_place(src: str, path: str) -> None:
    """Copy finished file `src` over `path`'s own content (same inode: its hard links follow)."""
    import shutil
    with open(src, "rb") as s, open(path, "r+b") as d:
        shutil.copyfileobj(s, d, 1 << 20)
        d.truncate()
        d.flush()
        os.fsync(d.fileno())


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (best effort: not every file system lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def save_arrays(path, arrays: "dict[str, Any]") -> None:
    """Write {key: array} as a .npz (stored, not compressed; Zip64 for big arrays), atomically, keeping
    ml_dtypes element types (see npy_bytes); byte-identical for identical arrays (fixed time stamps)."""
    import zipfile

    def write(f):
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
            for key, a in arrays.items():
                # a fixed time stamp and mode: the same results give the same bytes (CI caches, sha256)
                info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_STORED
                z.writestr(info, npy_bytes(a))
    write_atomic(path, write)


def save_results(path, leaves: list) -> None:
    """Result leaves as .npz (out0, out1, ...) or, for a path ending in .npy, the single leaf."""
    if os.path.splitext(str(path))[1].lower() == ".npy":
        write_atomic(path, npy_bytes(leaves[0]))
    else:
        save_arrays(path, {f"out{k}": a for k, a in enumerate(leaves)})


def end_process(code) -> None:
    """End the process with exit status `code` (SystemExit's: None, an int or a message) once every
    output is out, without the interpreter's teardown: freeing a large module, plan and arrays object by
    object and the final garbage collection cost a short hlo-run about as much CPU time as parsing its
    module, and `hlo check` or `hlo info` of a 100k-instruction module about 0.07 s.  Every file a
    command writes is complete and closed before it returns (write_atomic); what is left is run here:
    the atexit functions, then flushing stdout and stderr.  Anything unusual (another thread still
    running, a flush that fails) takes the interpreter's ordinary exit, which reports it as it always
    did."""
    import threading
    if not isinstance(code, int):
        if code is None:
            code = 0
        else:
            raise SystemExit(code)  # a message: the interpreter prints it
    if any(t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate()):
        raise SystemExit(code)
    import atexit
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code & 0xFF)
