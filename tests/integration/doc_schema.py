"""doc_schema.py MANPAGE SECTION JSONFILE [--names-only]: a JSON output of
shmwatch and the section of doc/shmwatch.1 that documents it say the same.

1. Every key of the output, at every depth, is named in the section.
2. Unless --names-only: the section's schema block (the first .nf to .fi
   whose text starts with "{"), read as the JSON-like text it is, has every
   "key" at its place in the output, with its documented values ("ok"|"warn")
   or type ((int|null), (bool), (string|null), ...).

Prints one "ok - ..." line per check; exits with a FAIL line when they
disagree. Run by tests/integration/docs_schema.sh."""
import json
import re
import sys

man_path, section_name, out_path = sys.argv[1:4]
names_only = "--names-only" in sys.argv[4:]
out = json.load(open(out_path))


def untroff(line):
    line = line.replace("\\-", "-").replace("\\(dq", '"').replace("\\e", "\\")
    line = re.sub(r"\\f[BIRP]", "", line)
    return re.sub(r"^\.[A-Z]+ ?", "", line)


# The section, from its heading to the next one.
section, on = [], False
for line in open(man_path):
    if line.startswith(".SH "):
        on = line.strip() == ".SH " + section_name
    elif on:
        section.append(line.rstrip("\n"))
if not section:
    sys.exit("FAIL: doc/shmwatch.1 has no %s section" % section_name)
words = set(re.findall(r"[a-z_][a-z0-9_]*", " ".join(untroff(l) for l in section)))

# 1. Every key of the output, at every depth, is named in the section.
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


keys(out, "")
if undocumented:
    sys.exit("FAIL: %s has fields that shmwatch(1)'s %s does not name: %s"
             % (out_path, section_name, ", ".join(sorted(undocumented.values()))))
print("ok - every field of %s is named in shmwatch(1)'s %s" % (out_path, section_name))
if names_only:
    sys.exit(0)

# 2. The schema block.
blocks, block = [], None
for line in section:
    if line.startswith(".nf"):
        block = []
    elif line.startswith(".fi") and block is not None:
        blocks.append(block)
        block = None
    elif block is not None:
        block.append(untroff(line))
text = next((" ".join(b) for b in blocks if " ".join(b).strip().startswith("{")), None)
if text is None:
    sys.exit("FAIL: shmwatch(1)'s %s has no schema block" % section_name)
tokens = re.findall(r'"[^"]*"|\([^)]*\)|[{}\[\]:,|]|[^\s{}\[\]:,|()"]+', text)

# The words of a note that name a type; a note with any other word, such as
# (see SEGMENT KINDS), says no type.
TYPES = {"int": (int,), "bool": (bool,), "string": (str,), "null": (type(None),),
         "main pid": (int,), "id": (str,), "name": (str,), "sentence": (str,),
         "RFC 3339": (str,)}
failures, checked = [], 0


def instances(path):
    """The values at path (a list of keys, "[]" for every element of a list)."""
    found = [out]
    for p in path:
        nxt = []
        for v in found:
            if p == "[]" and isinstance(v, list):
                nxt.extend(v)
            elif isinstance(v, dict) and p in v:
                nxt.append(v[p])
        found = nxt
    return found


def allowed(note):
    """The types a note such as (int|null: why) or (the last four int|null)
    allows, else None."""
    body = re.split(r"[:,]", note.strip("()"))[0]
    body = re.sub(r"^the last \w+ ", "", body)
    alts = [a.strip() for a in body.split("|")]
    if not all(a in TYPES for a in alts):
        return None
    return tuple(t for a in alts for t in TYPES[a])


def of_type(v, types):
    """isinstance, but a bool is no int (Python's bool is one) and an int no bool."""
    return isinstance(v, types) and (bool in types or not isinstance(v, bool))


def check(path, key, values, types):
    global checked
    parents = [v for v in instances(path) if isinstance(v, dict)]
    where = ".".join(path + [key]).replace(".[]", "[]")
    if not parents:
        failures.append("%s: no %s in the output to look in" % (where, ".".join(path) or "top level"))
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


def value(tok):
    if tok == "null":
        return None
    return json.loads(tok) if tok[0] in '"0123456789' else tok


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
                parsed = [value(v) for v in vals]
                # A placeholder ("RFC3339", "sentence") is a type, not a value.
                if all(v is None or (isinstance(v, str) and re.fullmatch(r"[a-z_]+", v))
                       for v in parsed) or all(isinstance(v, int) for v in parsed):
                    values = parsed
                elif all(isinstance(v, str) for v in parsed):
                    types = (str,)
        if peek() and peek().startswith("("):
            note = take()
            types = allowed(note) or types
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
    sys.exit("FAIL: %s and shmwatch(1)'s %s disagree:\n  %s"
             % (out_path, section_name, "\n  ".join(failures)))
print("ok - the %d fields of shmwatch(1)'s %s schema are in %s, of their documented types"
      % (checked, section_name, out_path))
