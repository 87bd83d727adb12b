#!/usr/bin/python3
"""PyTorch DataLoader workload for shmwatch integration tests.

Run it with /usr/bin/python3 (Debian 12's python3-torch 1.13, or Debian 13's
2.6 in the root tests/stack/rootfs.sh builds), inside a private mount
namespace with its own tmpfs on /dev/shm (and /tmp), e.g.

  unshare -m --propagation private sh -c '
    mount -t tmpfs -o size=64m tmpfs /dev/shm &&
    mount -t tmpfs tmpfs /tmp &&
    /usr/bin/python3 tests/torch/workload.py --hold-batches 2'

Protocol on stdout (one line each, flushed, JSON after the keyword):
  STUCK <json>   printed by worker 0 when --stuck-worker makes it block
  READY <json>   --hold-batches: main holds K batches and waits for stdin EOF/SIGTERM
  DONE <json>    the run finished normally (after --iterate-all or after READY)
  FORKED <json>  --fork-then-fill: the main and the child it forked
Exit status: 0 success; 1 the DataLoader failed (traceback on stderr, e.g. Bus error
or "No space left on device"); 2 usage error.
"""

import argparse
import json
import mmap
import multiprocessing
import os
import select
import signal
import sys
import time
import traceback
import warnings

import torch
import torch.multiprocessing
from torch.utils.data import DataLoader, Dataset, get_worker_info

# ---------------------------------------------------------------------------
# Datasets (module level so that "spawn" workers can unpickle them)


class SyntheticDataset(Dataset):
    """length samples made on demand; worker 0 may get stuck (maybe_get_stuck)."""

    def __init__(self, length, stuck_from=None, stuck_timeout=300.0):
        self.length = length
        self.stuck_from = stuck_from
        self.stuck_timeout = stuck_timeout

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        maybe_get_stuck(idx, self.stuck_from, self.stuck_timeout)
        return self.sample(idx)


class ImageDataset(SyntheticDataset):
    """Samples are one CxHxW tensor plus an int label: the normal case."""

    def __init__(self, length, shape, dtype, stuck_from=None, stuck_timeout=300.0):
        super().__init__(length, stuck_from, stuck_timeout)
        self.shape = shape
        self.dtype = dtype

    def sample(self, idx):
        # torch.full writes every page; collate copies into shared memory anyway.
        img = torch.full(self.shape, float(idx % 251), dtype=self.dtype)
        return img, idx


class DictDataset(SyntheticDataset):
    """Samples are dicts of many small Python objects: the anti-pattern.

    default_collate turns every small list element and number into its own
    tensor, so each batch becomes many tiny shared-memory segments (one per
    tensor: one fd each with file_descriptor, one file each with file_system).
    """

    def __init__(self, length, items, stuck_from=None, stuck_timeout=300.0):
        super().__init__(length, stuck_from, stuck_timeout)
        self.items = items

    def sample(self, idx):
        return {
            "idx": idx,
            "label": idx % 10,
            "score": float(idx) / 7.0,
            "name": "sample-%d" % idx,
            "boxes": [[float(idx), 1.0, 2.0, 3.0] for _ in range(self.items)],
            "tokens": list(range(idx % 7, idx % 7 + self.items)),
            "meta": {"source": "synthetic", "ids": [idx, idx + 1, idx + 2]},
        }


def maybe_get_stuck(idx, stuck_from, stuck_timeout):
    """Worker 0 blocks (SIGTERM ignored) on its first sample index >= stuck_from."""
    if stuck_from is None or idx < stuck_from:
        return
    info = get_worker_info()
    if info is None or info.id != 0:
        return
    line = "STUCK " + json.dumps({"pid": os.getpid(), "ppid": os.getppid(),
                                  "pgid": os.getpgid(0), "worker_id": info.id,
                                  "index": idx}, sort_keys=True) + "\n"
    os.write(1, line.encode())
    # Ignore SIGTERM only after the STUCK line is out: main waits for this
    # (SigIgn in /proc) before READY, so STUCK always precedes READY.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    deadline = time.monotonic() + stuck_timeout
    while time.monotonic() < deadline:
        time.sleep(0.5)
    # Safety valve so a forgotten test process does not live forever.
    os._exit(0)


def worker_init(strategy, clean_exit, worker_id):
    # spawn workers re-import this module and start with torch's default
    # strategy; set it in every worker so both start methods behave alike.
    torch.multiprocessing.set_sharing_strategy(strategy)
    if clean_exit:
        # torch 1.13, spawn + file_system, two exit problems (fork is fine):
        # 1. spawn workers get their multiprocessing pipes (the sentinel main
        #    joins on, the resource tracker's pipe) as inheritable fds, so the
        #    torch_shm_manager the worker forks+execs keeps them open and
        #    main's join waits its full 5 s timeout per worker.  Mark them
        #    close-on-exec before the first allocation starts the manager.
        # 2. at interpreter exit a C++ destructor sometimes calls
        #    std::terminate ("terminate called without an active exception",
        #    main reports the worker "killed by signal: Aborted").  Leaving
        #    with os._exit() from atexit skips that teardown.
        import atexit
        atexit.register(os._exit, 0)
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd > 2:
                try:
                    os.set_inheritable(fd, False)
                except OSError:
                    pass


class _InitFn:
    """Picklable worker_init_fn (functools.partial would do, this is clearer)."""

    def __init__(self, strategy, clean_exit=False):
        self.strategy = strategy
        self.clean_exit = clean_exit

    def __call__(self, worker_id):
        worker_init(self.strategy, self.clean_exit, worker_id)


# ---------------------------------------------------------------------------
# Helpers


def parse_shape(text):
    try:
        dims = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        dims = ()
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError("shape must look like 3x224x224")
    return dims


def batch_stats(obj):
    """(bytes, tensor count) of all tensors in a (nested) batch."""
    if isinstance(obj, torch.Tensor):
        return obj.element_size() * obj.nelement(), 1
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        nbytes = count = 0
        for x in obj:
            b, c = batch_stats(x)
            nbytes += b
            count += c
        return nbytes, count
    return 0, 0


def emit(keyword, payload):
    sys.stdout.write(keyword + " " + json.dumps(payload, sort_keys=True) + "\n")
    sys.stdout.flush()


def sigterm_ignored(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigIgn:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


def wait_until(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


_stop = False


def _on_term(signum, frame):
    global _stop
    _stop = True


def wait_for_release():
    """Block until stdin reaches EOF (or is unreadable) or SIGTERM arrives."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        fd = None
    while not _stop:
        if fd is None:
            time.sleep(0.2)
            continue
        try:
            r, _, _ = select.select([fd], [], [], 0.2)
        except InterruptedError:
            continue
        except (OSError, ValueError):
            fd = None
            continue
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                return


# ---------------------------------------------------------------------------


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--strategy", choices=["file_descriptor", "file_system"],
                   default="file_descriptor")
    p.add_argument("--start-method", choices=["fork", "spawn", "forkserver"], default="fork")
    p.add_argument("--workers", type=int, default=2, help="1..8 (tests use 2-8)")
    p.add_argument("--prefetch-factor", type=int, default=2)
    p.add_argument("--persistent-workers", action=argparse.BooleanOptionalAction,
                   default=False)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--shape", type=parse_shape, default=(3, 64, 64),
                   help="sample tensor shape CxHxW (images dataset)")
    p.add_argument("--dtype", choices=["float32", "uint8"], default="float32")
    p.add_argument("--dataset", choices=["images", "dicts"], default="images")
    p.add_argument("--dict-items", type=int, default=32,
                   help="small objects per list in each dicts sample")
    p.add_argument("--length", type=int, default=None,
                   help="samples in the dataset (default: enough for the mode)")
    p.add_argument("--hold-batches", type=int, default=None, metavar="K",
                   help="keep K batches alive, print READY, wait for stdin EOF/SIGTERM")
    p.add_argument("--stuck-worker", action="store_true",
                   help="worker 0 blocks in __getitem__ (SIGTERM ignored) once past "
                        "the held batches")
    p.add_argument("--stuck-timeout", type=float, default=300.0,
                   help="seconds the stuck worker sleeps before exiting by itself")
    p.add_argument("--iterate-all", action="store_true",
                   help="iterate the whole dataset and exit 0 (after --hold-batches: "
                        "keep holding them while iterating the rest)")
    p.add_argument("--step-seconds", type=float, default=0.0, metavar="S",
                   help="with --iterate-all: seconds the main process spends on each "
                        "batch, like a training step (the workers fill the prefetch "
                        "queue meanwhile)")
    p.add_argument("--linger-on-error", type=float, default=0.0, metavar="S",
                   help="with --iterate-all: when the loader fails, print the error and "
                        "stay S seconds before exiting 1, as a notebook's kernel or a "
                        "job that logs its failure outlives its loader (with "
                        "--fork-then-fill: after its child's end)")
    p.add_argument("--stop-on-sigterm", action="store_true",
                   help="with --iterate-all: SIGTERM ends the iteration after the "
                        "current batch (the workers shut down, DONE, exit 0), so that "
                        "a test watches a running job as long as it needs to")
    p.add_argument("--fork-then-fill", action="store_true",
                   help="no DataLoader: fork a child as a DataLoader forks a worker, "
                        "holding only the main's multiprocessing lock until SIGUSR1, "
                        "then filling /dev/shm past its size (fork_then_fill)")
    p.add_argument("--clean-worker-exit", action="store_true",
                   help="work around torch 1.13 spawn + file_system exit trouble "
                        "(5 s shutdown stalls, SIGABRT at worker exit)")
    return p


def fork_then_fill(linger):
    """What a scan can read of a DataLoader worker in its first moments,
    held until the test says go: the main holds a multiprocessing lock (its
    semaphore is a file of /dev/shm, unlinked at once and mapped), and the
    child it forks holds only that, and catches no signal. On SIGUSR1 the
    child writes a batch twice the size of /dev/shm, as a worker writing into
    a full mount does, and dies of the Bus error. The main reaps it, stays
    `linger` seconds and exits 1."""
    lock = multiprocessing.Lock()
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    child = os.fork()
    if child == 0:
        signal.sigwait([signal.SIGUSR1])
        st = os.statvfs("/dev/shm")
        size = 2 * st.f_blocks * st.f_frsize
        name = "/dev/shm/torch_%d_1" % os.getpid()
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.unlink(name)
        os.ftruncate(fd, size)
        batch = mmap.mmap(fd, size)
        for off in range(0, size, mmap.PAGESIZE):
            batch[off] = 1
        os._exit(0)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
    emit("FORKED", {"main_pid": os.getpid(), "child_pid": child})
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        print("the child was killed by signal %d" % os.WTERMSIG(status), file=sys.stderr, flush=True)
    else:
        print("the child exited %d" % os.WEXITSTATUS(status), file=sys.stderr, flush=True)
    time.sleep(linger)
    del lock
    return 1


def main(argv=None):
    p = build_parser()
    a = p.parse_args(argv)
    if a.fork_then_fill:
        return fork_then_fill(a.linger_on_error)
    if not 1 <= a.workers <= 8:
        p.error("--workers must be 1..8")
    if a.batch_size < 1 or a.prefetch_factor < 1:
        p.error("--batch-size and --prefetch-factor must be >= 1")
    if a.hold_batches is None and not a.iterate_all:
        p.error("choose --hold-batches K and/or --iterate-all")
    if a.step_seconds < 0:
        p.error("--step-seconds must be >= 0")
    if a.stop_on_sigterm and not a.iterate_all:
        p.error("--stop-on-sigterm needs --iterate-all")
    if a.hold_batches is not None and a.hold_batches < 0:
        p.error("--hold-batches must be >= 0")
    if a.stuck_worker and (a.hold_batches is None or a.iterate_all):
        p.error("--stuck-worker needs --hold-batches and excludes --iterate-all")

    hold = a.hold_batches or 0
    if a.length is None:
        if a.iterate_all and a.hold_batches is None:
            nbatches = a.workers * (a.prefetch_factor + 2)
        else:
            nbatches = hold + a.workers * a.prefetch_factor + 2
        a.length = nbatches * a.batch_size
    need = hold + (a.workers if a.stuck_worker else 0)
    if need * a.batch_size > a.length:
        p.error("--length too small: need %d batches" % need)

    # Keep stderr for real failures: more workers than cores is intended here.
    warnings.filterwarnings("ignore", message="This DataLoader will create")
    torch.multiprocessing.set_sharing_strategy(a.strategy)
    stuck_from = hold * a.batch_size if a.stuck_worker else None
    if a.dataset == "images":
        dtype = torch.float32 if a.dtype == "float32" else torch.uint8
        ds = ImageDataset(a.length, a.shape, dtype, stuck_from, a.stuck_timeout)
    else:
        ds = DictDataset(a.length, a.dict_items, stuck_from, a.stuck_timeout)

    ctx = torch.multiprocessing.get_context(a.start_method)
    loader = DataLoader(ds, batch_size=a.batch_size, shuffle=False,
                        num_workers=a.workers, prefetch_factor=a.prefetch_factor,
                        persistent_workers=a.persistent_workers,
                        multiprocessing_context=ctx,
                        worker_init_fn=_InitFn(a.strategy, a.clean_worker_exit))

    t0 = time.monotonic()
    it = iter(loader)
    worker_pids = [w.pid for w in it._workers]
    # Only now: forked workers must keep the default SIGTERM action.
    signal.signal(signal.SIGTERM, _on_term)
    held = []
    for _ in range(hold):
        held.append(next(it))
    stats = [batch_stats(b) for b in held]
    stuck_ok = None
    if a.stuck_worker:
        stuck_ok = wait_until(lambda: sigterm_ignored(worker_pids[0]), 20.0)

    info = {
        "main_pid": os.getpid(),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "worker_pids": worker_pids,
        "stuck_worker_pid": worker_pids[0] if a.stuck_worker else None,
        "stuck_worker_ready": stuck_ok,
        "strategy": a.strategy,
        "start_method": a.start_method,
        "dataset": a.dataset,
        "batch_size": a.batch_size,
        "shape": list(a.shape),
        "batches_held": len(held),
        "batch_bytes": [s[0] for s in stats],
        "batch_tensors": [s[1] for s in stats],
        "total_bytes": sum(s[0] for s in stats),
        "seconds": round(time.monotonic() - t0, 3),
    }
    if a.hold_batches is not None:
        emit("READY", info)
        wait_for_release()

    done_batches = len(held)
    done_bytes = info["total_bytes"]
    if a.iterate_all:
        # Like a training loop, b keeps the batch in use alive while next()
        # receives the following one (the "+2 held by the main process" of
        # shmwatch plan), so the peak is that of a real job.
        b = None
        try:
            for b in it:
                done_batches += 1
                done_bytes += batch_stats(b)[0]
                if a.step_seconds > 0:
                    time.sleep(a.step_seconds)
                if a.stop_on_sigterm and _stop:
                    break
        except RuntimeError:
            if a.linger_on_error <= 0:
                raise
            traceback.print_exc()
            sys.stderr.flush()
            time.sleep(a.linger_on_error)
            return 1
        del b
    del held
    if not a.stuck_worker:
        del it  # shuts the workers down (with a stuck worker this waits 5 s)
    emit("DONE", {"main_pid": os.getpid(), "batches": done_batches,
                  "bytes": done_bytes,
                  "seconds": round(time.monotonic() - t0, 3)})
    if a.stuck_worker:
        # Skip the iterator's shutdown (join, SIGTERM): leave the stuck worker behind.
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
