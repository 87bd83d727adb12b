"""The users of /dev/shm on an ML node, as real processes (tests/integration/kinds.sh).

jobs.py killed DIR READY: leaves, under its own pid, one file (or folder) of every
    kind, as a job killed mid-run does, then waits to be killed.
jobs.py live READY: holds an NCCL-style file open, maps a plasma-style file it has
    already unlinked (Ray's way: visible only through its maps), and maps a file of a
    joblib folder, then waits.
jobs.py hold PATH READY: maps PATH and waits.
"""
import ctypes
import mmap
import os
import sys
import time

SHM = "/dev/shm"
PAGE = 4096


def write(path, size):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"x" * size)
    return fd


def leave(path, size):
    os.close(write(path, size))


def map_only(fd, size):
    """Maps fd with libc's mmap: Python's mmap keeps a dup of the fd, a raylet does not."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    ctypes.memset(addr, ord("y"), 1)
    return addr


def ready(path):
    open(path, "w").close()
    time.sleep(600)


def killed(ready_path):
    pid = os.getpid()
    leave(f"{SHM}/torch_{pid}_1_0", 64 * PAGE)
    leave(f"{SHM}/__KMP_REGISTERED_LIB_{pid}_0", PAGE)
    folder = f"{SHM}/joblib_memmapping_folder_{pid}_{'a' * 32}_{'b' * 32}"
    os.mkdir(folder, 0o700)
    leave(f"{folder}/{pid}-1-x.pkl", 16 * PAGE)
    leave(f"{folder}/{pid}-1-y.pkl", 8 * PAGE)
    for name, size in [("nccl-Xy12Zq", 8 * PAGE), ("psm_0a1b2c3d", 2 * PAGE),
                       ("sem.mp-k1l2m3", 32), ("vader_segment.node.3e8.1.0", 2 * PAGE),
                       ("ucx_shm_posix_1f2e3d", PAGE), ("plasmaQ1w2E3", 4 * PAGE),
                       ("nvidia_dali_77", PAGE), ("deepspeed_allreduce_buffer_0", 4 * PAGE),
                       ("pulse-shm-123456", PAGE), (".org.chromium.Chromium.a1B2c3", PAGE),
                       ("some-other-data", PAGE)]:
        leave(f"{SHM}/{name}", size)
    ready(ready_path)


def live(ready_path):
    nccl = write(f"{SHM}/nccl-Ab12Cd", 8 * PAGE)  # held open, as a live NCCL peer does
    path = f"{SHM}/plasmaZz9Yy8"
    fd = write(path, 32 * PAGE)
    map_only(fd, 32 * PAGE)
    os.close(fd)
    os.unlink(path)  # the raylet's way: only the mapping keeps it
    ready(ready_path)
    del nccl


def hold(path, ready_path):
    fd = os.open(path, os.O_RDWR)
    map_only(fd, os.fstat(fd).st_size)
    os.close(fd)
    ready(ready_path)


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "killed":
        killed(sys.argv[2])
    elif what == "live":
        live(sys.argv[2])
    elif what == "hold":
        hold(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"jobs.py: unknown {what}")
