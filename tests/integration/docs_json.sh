#!/usr/bin/env bash
# The JSON snapshot and doc/shmwatch.1's JSON SNAPSHOT say the same: every
# field a real snapshot carries is named in that section, and every field of
# its schema block is in the snapshot with the type or the values it is
# documented with ((int|null), (bool), "ok"|"warn"|"critical", ...). The
# scene fills every object the block shows (a DataLoader group with its
# holders, orphans, unheld files, a zombie, a budget with a loader), and a
# System V segment, in an IPC namespace of its own, fills the sysv list.
. "$(dirname "$0")/lib.sh"
need_root
need_unshare
need /usr/bin/python3
# A private pid namespace: only this test's processes are reported.
test_ns 64m --pid -- "$@"
MANPAGE=$SRCDIR/doc/shmwatch.1
[ -r "$MANPAGE" ] || fail "cannot read $MANPAGE"
unshare -i true 2>/dev/null || _lib_missing "a private IPC namespace (unshare -i)"

scene_start --workers 2 --per-worker 4 --orphans 2 --unheld 1 --zombies 1
hold_new_file /dev/shm/in_use_outside
# shmwatch runs beside a System V segment of its own IPC namespace, attached
# by the process that made it, so that the namespace ends with the test.
snap=$SHMTEST_TMP/snap.json
unshare -i /usr/bin/python3 -c '
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(0x5eed, 65536, 0o1600)
if shmid < 0 or libc.shmat(shmid, None, 0) in (None, ctypes.c_void_p(-1).value):
    sys.exit("cannot make a System V segment: errno %d" % ctypes.get_errno())
with open(sys.argv[2], "w") as out:
    sys.exit(subprocess.run([sys.argv[1], "--json"], stdout=out).returncode)
' "$SHMWATCH" "$snap" || fail "shmwatch --json beside a System V segment exited $?"

/usr/bin/python3 - "$MANPAGE" "$snap" <<'PY' || exit 1
import json, re, sys

man_path, snap_path = sys.argv[1:3]
snap = json.load(open(snap_path))


def untroff(line):
    line = line.replace("\\-", "-").replace("\\(dq", '"').replace("\\e", "\\")
    line = re.sub(r"\\f[BIRP]", "", line)
    return re.sub(r"^\.[A-Z]+ ?", "", line)


# The section, from its heading to the next one.
section, on = [], False
for line in open(man_path):
    if line.startswith(".SH "):
        on = line.strip() == ".SH JSON SNAPSHOT"
    elif on:
        section.append(line.rstrip("\n"))
if not section:
    sys.exit("FAIL: doc/shmwatch.1 has no JSON SNAPSHOT section")
words = set(re.findall(r"[a-z_][a-z0-9_]*", " ".join(untroff(l) for l in section)))

# 1. Every key of the snapshot, at every depth, is named in the section.
undocumented = {}


def keys(value, path):
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in words:
                undocumented.setdefault(k, path + "." + k)
            keys(v, path + "." + k)
    elif isinstance(value, list):
        for v in value:
            keys(v, path + "[]")


keys(snap, "")
if undocumented:
    sys.exit("FAIL: the snapshot has fields that shmwatch(1)'s JSON SNAPSHOT does not name: "
             + ", ".join(sorted(undocumented.values())))
print("ok - every field of the snapshot is named in shmwatch(1)'s JSON SNAPSHOT")

# 2. The schema block (.nf to .fi), read as the JSON-like text it is: every
# "key" at its place in the snapshot, with its documented values or type.
block = []
for line in section:
    if line.startswith(".nf"):
        block = []
    elif line.startswith(".fi"):
        break
    else:
        block.append(untroff(line))
text = " ".join(block)
tokens = re.findall(r'"[^"]*"|\([^)]*\)|[{}\[\]:,|]|[^\s{}\[\]:,|()"]+', text)

TYPES = {"int": (int,), "bool": (bool,), "string": (str,), "null": (type(None),),
         "main pid": (int,)}
failures, checked = [], 0


def instances(path):
    """The values at path (a list of keys, "[]" for every element of a list)."""
    out = [snap]
    for p in path:
        nxt = []
        for v in out:
            if p == "[]" and isinstance(v, list):
                nxt.extend(v)
            elif isinstance(v, dict) and p in v:
                nxt.append(v[p])
        out = nxt
    return out


def allowed(note):
    """The types a note such as (int|null) or (the last four int|null) allows."""
    kinds = re.findall(r"int|bool|string|null|main pid", note)
    return tuple(t for k in kinds for t in TYPES[k]) if kinds else None


def of_type(v, types):
    """isinstance, but a bool is no int (Python's bool is one) and an int no bool."""
    return isinstance(v, types) and (bool in types or not isinstance(v, bool))


def check(path, key, values, types):
    global checked
    parents = [v for v in instances(path) if isinstance(v, dict)]
    where = ".".join(path + [key]).replace(".[]", "[]")
    if not parents:
        failures.append("%s: no %s in the snapshot to look in" % (where, ".".join(path) or "top level"))
        return
    for parent in parents:
        if key not in parent:
            failures.append("%s: documented but missing" % where)
            return
        v = parent[key]
        if types and not of_type(v, types):
            failures.append("%s: %r is not of the documented type" % (where, v))
            return
        if values and v not in values and not isinstance(v, (dict, list)):
            failures.append("%s: %r is not one of the documented values %s" % (where, v, values))
            return
    checked += 1


# A small recursive reader of the block: objects, lists of objects, "key",
# "key": VALUES, "key" (NOTE), "key": null | { ... }.
pos = 0


def peek():
    return tokens[pos] if pos < len(tokens) else None


def take():
    global pos
    pos += 1
    return tokens[pos - 1]


def back():
    global pos
    pos -= 1


def read_object(path):
    assert take() == "{"
    pending = []  # keys whose note comes after them: "the last four int|null"
    while peek() not in ("}", None):
        tok = take()
        if tok == ",":
            continue
        if not tok.startswith('"'):
            continue  # "..." and the like
        key, values, types = tok.strip('"'), None, None
        if peek() == ":":
            take()
            if peek() == "[":
                take()
                if peek() == "{":
                    read_object(path + [key, "[]"])
                while peek() not in ("]", None):
                    take()
                take()
                check(path, key, None, (list,))
                pending = []
                continue
            vals = []
            while peek() not in (",", "}", None) and not peek().startswith("("):
                t = take()
                if t == "{":
                    back()
                    nullable = "null" in vals
                    read_object(path + [key])
                    check(path, key, None, (dict, type(None)) if nullable else (dict,))
                    vals = None
                    break
                if t != "|":
                    vals.append(t)
            if vals is None:
                pending = []
                continue
            if vals:
                parsed = [json.loads(v) if v[0] in '"0123456789' else v for v in vals]
                # A placeholder ("RFC3339", "sentence") is a type, not a value.
                if all(isinstance(v, str) and re.fullmatch(r"[a-z_]+", v) for v in parsed) or \
                        all(isinstance(v, int) for v in parsed):
                    values = parsed
                else:
                    types = (str,) if all(isinstance(v, str) for v in parsed) else None
        if peek() and peek().startswith("("):
            note = take()
            types = allowed(note)
            m = re.match(r"\(the last (\w+) ", note)
            if m:  # the note covers the keys before it too
                n = {"two": 2, "three": 3, "four": 4}[m.group(1)]
                for k in pending[-(n - 1):]:
                    check(path, k, None, types)
        check(path, key, values, types)
        pending.append(key)
    take()


read_object([])
if failures:
    sys.exit("FAIL: the snapshot and shmwatch(1)'s JSON SNAPSHOT disagree:\n  " + "\n  ".join(failures))
print("ok - the %d fields of shmwatch(1)'s schema block are in the snapshot, of their documented types" % checked)
PY
