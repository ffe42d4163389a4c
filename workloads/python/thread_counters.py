"""Per-thread hardware counters (CPU cycles, instructions) of this process, through Linux's
perf_event_open(2) called with ctypes; for mlp_train.py --step-times.

Why: on a shared host the wall time of the same step varies by 10-20 % between processes (the
CPU's speed changes under other tenants), more than the profiler costs being measured; the cycles
and instructions a thread spends per step depend much less on that, so they attribute a
profiler's host cost (which thread, how much) where wall times cannot.

Counts user space only (exclude_kernel, exclude_hv), which perf_event_paranoid <= 2 allows for
one's own threads. Where the kernel or the virtual machine offers no hardware counters,
ThreadCounters.error says why and every count is None.
"""

import ctypes
import os

_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
_PERF_TYPE_HARDWARE = 0
_EVENTS = {"cycles": 0, "instructions": 1}  # PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_HW_INSTRUCTIONS
_EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 5, 1 << 6


class _PerfEventAttr(ctypes.Structure):
    """struct perf_event_attr up to PERF_ATTR_SIZE_VER0 (64 bytes), linux/perf_event.h."""
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("config1", ctypes.c_uint64)]


class ThreadCounters:
    """Counters opened on the given threads of this process; read() gives their counts so far."""

    def __init__(self, tids):
        self.error = None
        self._fds = {}  # (tid, event) -> fd
        if _SYS_PERF_EVENT_OPEN is None:
            self.error = f"no perf_event_open syscall number for {os.uname().machine}"
            return
        libc = ctypes.CDLL(None, use_errno=True)
        for tid in tids:
            for event, config in _EVENTS.items():
                attr = _PerfEventAttr(type=_PERF_TYPE_HARDWARE, size=ctypes.sizeof(_PerfEventAttr),
                                      config=config, flags=_EXCLUDE_KERNEL | _EXCLUDE_HV)
                fd = libc.syscall(_SYS_PERF_EVENT_OPEN, ctypes.byref(attr), int(tid), -1, -1, 0)
                if fd < 0:
                    err = ctypes.get_errno()
                    if self.error is None:
                        self.error = f"perf_event_open({event}, tid {tid}): {os.strerror(err)}"
                    continue
                self._fds[(int(tid), event)] = fd

    def read(self):
        """{tid: {"cycles": n or None, "instructions": n or None}}."""
        out = {}
        for (tid, event), fd in self._fds.items():
            try:
                out.setdefault(tid, {})[event] = int.from_bytes(os.read(fd, 8), "little")
            except OSError:
                out.setdefault(tid, {})[event] = None
        return out

    def close(self):
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
