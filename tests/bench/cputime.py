#!/usr/bin/python3
"""Runs commands alternately and reports the median CPU time of each.

    cputime.py --runs N [--warmup K] [--tolerate NAME] [--pair A/B ...]
               NAME=COMMAND [NAME=COMMAND ...]

COMMAND is split like a shell word list (no shell runs it, so its start-up is
not measured); its stdout goes to /dev/null. Round r runs every command once,
in turn, so a noisy neighbour hits all of them alike. CPU time is user + system
of the child and everything it waited for (wait4's rusage, microseconds).
Prints one line per command: NAME median_s min_s max_s wall_median_s.
--pair A/B (commands A and B) adds a line "pair A/B RATIO": the median over
the rounds of A's CPU time over B's in the same round. The machine's slow
spells last longer than a round, so they move both runs of a round alike:
this ratio moves less with them than the ratio of the two medians.
A command that exits non-zero is an error (its stderr is shown and the
script exits 1) unless its NAME was given to --tolerate (lsof exits 1 when
it merely warns).
"""
import os
import shlex
import statistics
import sys
import time


def run_once(argv, tolerate):
    devnull = os.open(os.devnull, os.O_WRONLY)
    err_r, err_w = os.pipe()
    t0 = time.monotonic()
    pid = os.posix_spawnp(argv[0], argv, os.environ,
                          file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                        (os.POSIX_SPAWN_DUP2, err_w, 2),
                                        (os.POSIX_SPAWN_CLOSE, err_r)])
    os.close(devnull)
    os.close(err_w)
    err = b""
    while True:
        chunk = os.read(err_r, 65536)
        if not chunk:
            break
        if len(err) < 4096:
            err += chunk
    os.close(err_r)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not tolerate:
        sys.stderr.write(f"cputime: {shlex.join(argv)} exited with {code}: "
                         f"{err.decode(errors='replace')[:2000]}\n")
        sys.exit(1)
    return ru.ru_utime + ru.ru_stime, wall


def main():
    args = sys.argv[1:]
    runs, warmup = 5, 1
    cmds = []
    tolerate = set()
    pairs = []
    def value(opt, kind=str):
        if not args:
            sys.exit(f"cputime: {opt} needs a value")
        v = args.pop(0)
        try:
            return kind(v)
        except ValueError:
            sys.exit(f"cputime: {opt}: {v!r} is not a whole number")

    while args:
        a = args.pop(0)
        if a == "--runs":
            runs = value(a, int)
        elif a == "--tolerate":
            tolerate.add(value(a))
        elif a == "--pair":
            pairs.append(tuple(value(a).split("/", 1)))
        elif a == "--warmup":
            warmup = value(a, int)
        elif "=" in a:
            name, cmd = a.split("=", 1)
            cmds.append((name, shlex.split(cmd)))
        else:
            sys.exit(f"cputime: unexpected argument {a!r}\n{__doc__}")
    if not cmds or runs < 1 or warmup < 0:
        sys.exit(__doc__)
    names = {n for n, _ in cmds}
    for pair in pairs:
        if len(pair) != 2 or not set(pair) <= names:
            sys.exit(f"cputime: --pair {'/'.join(pair)}: not two of the commands' names")
    cpu = {n: [] for n, _ in cmds}
    wall = {n: [] for n, _ in cmds}
    for r in range(warmup + runs):
        # Rotate the order each round as well, so no command always runs
        # right after another's cache damage.
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            c, w = run_once(argv, name in tolerate)
            if r >= warmup:
                cpu[name].append(c)
                wall[name].append(w)
    for name, _ in cmds:
        xs = cpu[name]
        print(f"{name} {statistics.median(xs):.6f} {min(xs):.6f} {max(xs):.6f} "
              f"{statistics.median(wall[name]):.6f}")
    for a, b in pairs:
        ratios = [x / y for x, y in zip(cpu[a], cpu[b]) if y > 0]
        print(f"pair {a}/{b} {statistics.median(ratios) if ratios else 0:.4f}")


if __name__ == "__main__":
    main()
