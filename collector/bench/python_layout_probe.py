#!/usr/bin/env python3
"""Finds, in the running CPython, the struct offsets the collector's GIL-free Python frame walk
reads (collector/src/PythonLayout.cpp), by looking for known pointers in the interpreter's own
objects; prints them as one JSON line. Reads memory through /proc/self/mem, so a wrong guess
gives None rather than a crash. Used to check the layout table against each CPython version:
  python3 collector/bench/python_layout_probe.py
"""
import ctypes
import json
import sys

MEM = open("/proc/self/mem", "rb", buffering=0)


def ptr(addr):
    try:
        MEM.seek(addr)
        return int.from_bytes(MEM.read(8), "little")
    except (OSError, ValueError, OverflowError):
        return None


def byte(addr):
    try:
        MEM.seek(addr)
        return MEM.read(1)[0]
    except (OSError, ValueError, OverflowError):
        return None


def find(base, target, limit):
    return [off for off in range(0, limit, 8) if ptr(base + off) == target]


get_tstate = ctypes.pythonapi.PyGILState_GetThisThreadState
get_tstate.restype = ctypes.c_void_p
FRAME_F_FRAME = 24  # PyFrameObject: PyObject_HEAD, f_back, f_frame (3.11, 3.12)


def mapped_ranges():
    ranges = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if "r" in fields[1]:
                begin, end = (int(x, 16) for x in fields[0].split("-"))
                ranges.append((begin, end))
    return ranges


def interpreter_frame(frame):
    return ptr(id(frame) + FRAME_F_FRAME)


class Probe:  # a method: its co_qualname ("Probe.probe") differs from co_name ("probe")
    @staticmethod
    def probe():
        frame = sys._getframe()
        code = frame.f_code
        iframe = interpreter_frame(frame)
        caller = interpreter_frame(frame.f_back)
        out = {"version": list(sys.version_info[:3]), "hexversion": hex(sys.hexversion)}
        out["frame_code"] = find(iframe, id(code), 96)
        out["frame_previous"] = find(iframe, caller, 96)
        start = id(code) + type(code).__basicsize__
        out["code_basicsize"] = type(code).__basicsize__
        out["frame_prev_instr"] = [o for o in range(0, 96, 8)
                                   if (p := ptr(iframe + o)) is not None
                                   and start <= p < start + len(code.co_code) * 2]
        out["code_filename"] = find(id(code), id(code.co_filename), 256)
        out["code_qualname"] = find(id(code), id(code.co_qualname), 256)
        out["code_name"] = find(id(code), id(code.co_name), 256)
        out["code_firstlineno_int"] = [o for o in range(0, 256, 4)
                                       if ctypes.c_int.from_address(id(code) + o).value == code.co_firstlineno]
        tstate = get_tstate()
        maps = mapped_ranges()
        # tstate->cframe->current_frame (3.11, 3.12) or tstate->current_frame (3.13+) is this frame
        # while this function runs: read inline (a call of a Python function would change it).
        ts = (ctypes.c_char * 512).from_address(tstate).raw
        direct, via = [], []
        for off in range(0, 512, 8):
            p = int.from_bytes(ts[off:off + 8], "little")
            if p == iframe:
                direct.append(off)
            mapped = False
            for begin, end in maps:
                if begin <= p and p + 24 <= end:
                    mapped = True
                    break
            if mapped and p % 8 == 0:
                inner_bytes = (ctypes.c_char * 24).from_address(p).raw
                for inner in (0, 8, 16):
                    if int.from_bytes(inner_bytes[inner:inner + 8], "little") == iframe:
                        via.append([off, inner])
        out["tstate_current_frame"] = direct
        out["tstate_cframe_current"] = via
        out["unicode_ascii_data"] = sys.getsizeof("") - 1
        return out


def gen():
    frame = sys._getframe()
    iframe = interpreter_frame(frame)
    yield iframe


def owner_offsets():
    frame = sys._getframe()
    normal = interpreter_frame(frame)
    g = gen()
    generator = next(g)
    return [o for o in range(60, 80) if byte(normal + o) == 0 and byte(generator + o) == 1]


result = Probe.probe()
result["frame_owner"] = owner_offsets()
print(json.dumps(result))
