"""A JPEG's luminance DC coefficients edited without decoding its pixels: libjpeg-turbo's lossless
transform (TurboJPEG's tjTransform with a custom filter), through ctypes.

Decoding a 640x480 JPEG at quality 92 and encoding it again cost about 5 ms of CPU on the shared
2-core machine (2.4 ms and 2.6 ms); the lossless transform only undoes and redoes the entropy
coding, keeps every other coefficient as it was (no generation loss) and cost 2.7 ms. The
library is Debian's libturbojpeg0 (scripts/system-packages.sh); without it every call is Unsupported.

TurboJPEG calls the filter once per row of 8x8 blocks of each component; this module hands the
luminance rows' DC coefficients (one int16 a block, a strided view) to the caller's edit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

BLOCK_COEFFICIENTS = 64  # a JBLOCK: 8x8 coefficients in natural order, the DC first
TJXOP_NONE = 0
TJXOPT_COPYNONE = 64  # no EXIF, ICC or comment markers copied: what a re-encode left too
TJCS_YCbCr = 1
# A warning (a truncated or corrupt file) fails the transform instead of passing as it stands, and
# a progressive file of over 500 scans (a known way to burn CPU) is refused.
TJFLAG_STOPONWARNING = 8192
TJFLAG_LIMITSCANS = 32768

# edit(dc, row, rows): the DC coefficients of luminance block row `row` of `rows`, edited in place.
Edit = Callable[[np.ndarray, int, int], None]


class Unsupported(ValueError):
    """The file is not a YCbCr JPEG this transform can edit (or the library is missing)."""


class _Region(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("w", ctypes.c_int), ("h", ctypes.c_int)]


class _Transform(ctypes.Structure):
    pass


_Filter = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.POINTER(ctypes.c_short),
    _Region,
    _Region,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.POINTER(_Transform),
)
_Transform._fields_ = [
    ("r", _Region),
    ("op", ctypes.c_int),
    ("options", ctypes.c_int),
    ("data", ctypes.c_void_p),
    ("customFilter", _Filter),
]


@functools.cache
def _library() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("turbojpeg") or "libturbojpeg.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.tjInitTransform.restype = ctypes.c_void_p
    lib.tjFree.argtypes = [ctypes.c_void_p]
    lib.tjGetErrorStr2.argtypes = [ctypes.c_void_p]
    lib.tjGetErrorStr2.restype = ctypes.c_char_p
    int_out = ctypes.POINTER(ctypes.c_int)
    lib.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, *[int_out] * 4]
    lib.tjTransform.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_ulong,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_ulong),
        ctypes.POINTER(_Transform),
        ctypes.c_int,
    ]
    return lib


@functools.cache
def _handle() -> int:
    """One transform handle a process (handles are not shared across threads: imports run in processes)."""
    lib = _library()
    assert lib is not None
    return int(lib.tjInitTransform())


def edit_luma_dc(data: bytes, edit: Edit) -> bytes:
    """The JPEG `data` with its luminance DC coefficients as `edit` leaves them, all else kept."""
    lib = _library()
    if lib is None:
        raise Unsupported("libturbojpeg is not installed")
    handle = _handle()
    _check_ycbcr(lib, handle, data)
    failure: list[BaseException] = []

    def on_row(coefficients: Any, array: _Region, plane: _Region, component: int, *_: object) -> int:
        if component != 0:
            return 0
        try:
            blocks, row = array.w // 8, array.y // 8
            address = ctypes.addressof(coefficients.contents)
            values = np.frombuffer((ctypes.c_short * (blocks * BLOCK_COEFFICIENTS)).from_address(address), np.int16)
            edit(values[::BLOCK_COEFFICIENTS], row, plane.h // 8)
        except BaseException as error:  # raised through C: kept, and the transform stopped
            failure.append(error)
            return -1
        return 0

    transform = _Transform(_Region(0, 0, 0, 0), TJXOP_NONE, TJXOPT_COPYNONE, None, _Filter(on_row))
    output, size = ctypes.c_void_p(), ctypes.c_ulong(0)
    flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS
    status = lib.tjTransform(handle, data, len(data), 1, ctypes.byref(output), ctypes.byref(size), transform, flags)
    try:
        if failure:
            raise failure[0]
        if status != 0:
            raise Unsupported(f"libjpeg-turbo refused it: {lib.tjGetErrorStr2(handle).decode(errors='replace')}")
        return ctypes.string_at(output, size.value)
    finally:
        if output:
            lib.tjFree(output)


def _check_ycbcr(lib: ctypes.CDLL, handle: int, data: bytes) -> None:
    width, height, subsampling, colourspace = (ctypes.c_int() for _ in range(4))
    status = lib.tjDecompressHeader3(
        handle,
        data,
        len(data),
        ctypes.byref(width),
        ctypes.byref(height),
        ctypes.byref(subsampling),
        ctypes.byref(colourspace),
    )
    if status != 0 or colourspace.value != TJCS_YCbCr:
        raise Unsupported("not a YCbCr JPEG")
