/* The fingerprints of PyTorch's processes, in one place: the names torch
 * gives its processes, the signals its DataLoader workers catch, the
 * library that says PyTorch is loaded, and the command line of Python's
 * forkserver, which forks workers for a main. The /proc walk (collect/walk.c)
 * decides with them which processes to read in full, and the roles
 * (model/roles.c) decide with them what each process is: being one table,
 * they cannot disagree (tests/unit/test_torchprint.c checks that every
 * fingerprint the roles know passes the walk's pre-filter). Pure, no I/O. */
#ifndef SHMWATCH_TORCHPRINT_H
#define SHMWATCH_TORCHPRINT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum torch_comm {
    TORCH_COMM_NONE,
    TORCH_COMM_WORKER,   /* a DataLoader worker (torch >= 2.5 names them) */
    TORCH_COMM_PIN,      /* the pin-memory thread */
    TORCH_COMM_MANAGER,  /* torch_shm_manager, cut to the kernel's 15 bytes */
    TORCH_COMM_LAUNCHER, /* torchrun's elastic agent: its children are ranks */
};

struct torch_comm_name {
    const char *comm; /* as /proc/PID/stat shows it: at most 15 bytes */
    enum torch_comm what;
};

/* Every name torch gives its processes and threads. */
extern const struct torch_comm_name torch_comm_names[];
extern const size_t torch_ncomm_names;

/* What a process's comm says it is: an exact match in torch_comm_names. */
enum torch_comm torchprint_comm(const char *comm);

/* The walk's pre-filter: a comm in torch's families (pt_..., torch_...),
 * true for every name of torch_comm_names and for names a later torch may
 * add to those families. */
bool torchprint_comm_maybe(const char *comm);

/* Signals as in /proc/PID/status SigCgt: bit n-1 for signal n. torch's
 * DataLoader workers install C handlers for SIGBUS, SIGSEGV and SIGFPE
 * (_set_worker_signal_handlers); Python's faulthandler catches those and
 * SIGILL and SIGABRT as well. */
#define TORCHPRINT_SIG(n) (1ull << ((n) - 1))
#define TORCHPRINT_WORKER_SIGS                                                                 \
    (TORCHPRINT_SIG(SIGBUS) | TORCHPRINT_SIG(SIGSEGV) | TORCHPRINT_SIG(SIGFPE))
#define TORCHPRINT_FAULTHANDLER_SIGS (TORCHPRINT_SIG(SIGILL) | TORCHPRINT_SIG(SIGABRT))

/* The walk's pre-filter: catches every signal a worker catches (with
 * libtorch mapped, the process is read in full). */
bool torchprint_signals_maybe(uint64_t sigcatch);

/* The roles' rule: catches a worker's signals and not faulthandler's. With
 * libtorch mapped, that marks a worker that holds no segment and carries no
 * name (torch < 2.5). Implies torchprint_signals_maybe. */
bool torchprint_worker_signals(uint64_t sigcatch);

/* Does this text (a mapped file's path, or a whole maps text) name a
 * libtorch library (libtorch.so, libtorch_cpu.so, ...)? */
bool torchprint_libtorch(const char *text, size_t len);

/* Is this command line (collect/procs.h: the arguments joined by spaces, or
 * NULL) the one Python's multiprocessing starts its forkserver with
 * (forkserver.py, ensure_running)? The interpreter (the first word), its
 * flags (util._args_from_interpreter_flags: words that start with '-', the
 * word after -X or -W its value), then -c and code that starts "from
 * multiprocessing.forkserver import main". The processes the forkserver
 * forks keep that command line. */
bool torchprint_forkserver(const char *cmdline);

#endif
