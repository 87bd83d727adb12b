/* Which container a process is in, from its cgroup path (see the header for
 * the forms). The path is read one component at a time, left to right: the
 * Kubernetes components say which pod and QoS class, the first component
 * that names a container ends the walk. */
#include "util/container_id.h"

#include <string.h>

#include "util/procstat.h"

/* A piece of the text: components and lines are not NUL-terminated. */
struct span {
    const char *s;
    size_t n;
};

static bool span_is(struct span c, const char *word)
{
    size_t n = strlen(word);
    return c.n == n && memcmp(c.s, word, n) == 0;
}

/* Takes prefix off the front of *c when it is there. */
static bool span_eat(struct span *c, const char *prefix)
{
    size_t n = strlen(prefix);
    if (c->n < n || memcmp(c->s, prefix, n) != 0)
        return false;
    c->s += n;
    c->n -= n;
    return true;
}

/* Takes suffix off the end of *c when it is there. */
static bool span_chop(struct span *c, const char *suffix)
{
    size_t n = strlen(suffix);
    if (c->n < n || memcmp(c->s + c->n - n, suffix, n) != 0)
        return false;
    c->n -= n;
    return true;
}

/* The piece of *rest up to the first sep (all of it when there is none),
 * taken off with the sep. */
static struct span take_until(struct span *rest, char sep)
{
    const char *at = memchr(rest->s, sep, rest->n);
    struct span piece = {rest->s, at ? (size_t)(at - rest->s) : rest->n};
    size_t taken = piece.n + (at ? 1 : 0);
    rest->s += taken;
    rest->n -= taken;
    return piece;
}

static void copy_span(char *dst, struct span c)
{
    memcpy(dst, c.s, c.n);
    dst[c.n] = '\0';
}

/* The text goes on past a span to a NUL: strspn stops there at the latest. */
static bool is_id(struct span c)
{
    return c.n == CONTAINER_ID_HEX && strspn(c.s, "0123456789abcdef") >= c.n;
}

bool container_id_full(const char *id)
{
    return is_id((struct span){id, strlen(id)});
}

/* A pod uid: 32 hex digits (a static pod's), or 8-4-4-4-12 with sep between
 * the groups ('-', or '_' in systemd's slice names). Copied with dashes as
 * it is read: out means nothing when the answer is false. */
static bool take_uid(struct span c, char sep, char out[POD_UID_MAX + 1])
{
    if (c.n != 32 && c.n != 36)
        return false;
    for (size_t i = 0; i < c.n; i++) {
        bool dash = c.n == 36 && (i == 8 || i == 13 || i == 18 || i == 23);
        if (dash ? c.s[i] != sep : !memchr("0123456789abcdef", c.s[i], 16))
            return false;
        out[i] = dash ? '-' : c.s[i];
    }
    out[c.n] = '\0';
    return true;
}

/* A name (lxc, nspawn) into out->id; with unescape, systemd's \xNN undone. */
static bool take_name(struct span c, bool unescape, struct container_id *out)
{
    size_t k = 0;
    if (c.n == 0)
        return false;
    for (size_t i = 0; i < c.n; i++) {
        char ch = c.s[i];
        unsigned hi, lo; /* one more than each digit's value (hex_digit1) */
        if (unescape && ch == '\\' && i + 3 < c.n && c.s[i + 1] == 'x' &&
            (hi = hex_digit1[(unsigned char)c.s[i + 2]]) &&
            (lo = hex_digit1[(unsigned char)c.s[i + 3]])) {
            ch = (char)((hi - 1) << 4 | (lo - 1));
            i += 3;
        }
        if (ch == '\0' || k >= CONTAINER_ID_MAX)
            return false;
        out->id[k++] = ch;
    }
    out->id[k] = '\0';
    return true;
}

/* The forms that name a container by a prefix, wherever they are:
 * "<prefix><id>.scope", the suffix optional where scope_optional. */
static const struct {
    const char *prefix;
    bool scope_optional;
    enum container_runtime runtime;
} prefixed[] = {
    {"docker-", false, RUNTIME_DOCKER},
    {"cri-containerd-", false, RUNTIME_CONTAINERD},
    {"nerdctl-", false, RUNTIME_CONTAINERD},
    {"crio-", true, RUNTIME_CRIO},
    {"libpod-", true, RUNTIME_PODMAN},
};

static enum container_runtime runtime_component(struct span c, struct container_id *out)
{
    for (size_t i = 0; i < sizeof(prefixed) / sizeof(prefixed[0]); i++) {
        struct span id = c;
        if (span_eat(&id, prefixed[i].prefix) &&
            (span_chop(&id, ".scope") || prefixed[i].scope_optional) && is_id(id)) {
            copy_span(out->id, id);
            return prefixed[i].runtime;
        }
    }
    return RUNTIME_NONE;
}

/* Whether a QoS level is at the front of *c ("besteffort", "burstable"):
 * it is taken off (guaranteed pods have none). */
static bool eat_qos(struct span *c)
{
    return span_eat(c, "besteffort") || span_eat(c, "burstable");
}

struct kube {
    bool seen; /* below the kubelet's kubepods cgroup */
    bool pod;  /* below a pod's */
    char uid[POD_UID_MAX + 1];
};

/* systemd's slices: [<root>-]kubepods[-<qos>][-pod<uid_with_underscores>].slice,
 * where <root> is the kubelet's --cgroup-root ("kubelet-" in kind). */
static bool kube_slice(struct span c, struct kube *k)
{
    if (!span_chop(&c, ".slice"))
        return false;
    const char *end = c.s + c.n;
    const char *at = NULL;
    for (const char *p = c.s; p + 8 <= end; p++)
        if (memcmp(p, "kubepods", 8) == 0 && (p == c.s || p[-1] == '-'))
            at = p;
    if (!at)
        return false;
    struct span rest = {at + 8, (size_t)(end - at - 8)};
    if (span_eat(&rest, "-") && eat_qos(&rest) && rest.n)
        if (!span_eat(&rest, "-"))
            return false;
    bool pod = rest.n > 0;
    if (pod && (!span_eat(&rest, "pod") || !take_uid(rest, '_', k->uid)))
        return false;
    k->seen = true;
    k->pod = pod;
    return true;
}

/* One component of the path on the Kubernetes side, noted in k: the
 * kubepods cgroup, a QoS level, a pod. */
static void kube_component(struct span c, struct kube *k)
{
    if (k->pod)
        return;
    if (span_is(c, "kubepods")) {
        k->seen = true;
        return;
    }
    if (kube_slice(c, k) || !k->seen)
        return;
    struct span u = c;
    if (eat_qos(&u) && u.n == 0)
        return;
    u = c;
    if (span_eat(&u, "pod"))
        k->pod = take_uid(u, '-', k->uid);
}

static bool next_component(struct span *path, struct span *c)
{
    while (path->n && path->s[0] == '/') {
        path->s++;
        path->n--;
    }
    if (!path->n)
        return false;
    *c = take_until(path, '/');
    return true;
}

/* A user's own systemd manager, user@UID.service: below it, that user names
 * the cgroups. */
static bool is_user_manager(struct span c)
{
    return span_eat(&c, "user@") && span_chop(&c, ".service") && c.n &&
           strspn(c.s, "0123456789") >= c.n;
}

static bool from_span(struct span path, struct container_id *out)
{
    memset(out, 0, sizeof(*out));
    struct kube k = {0};
    bool after_pod = false;
    struct span c, prev = {"", 0};
    while (next_component(&path, &c)) {
        out->user_delegated = out->user_delegated || is_user_manager(c);
        enum container_runtime r = runtime_component(c, out);
        /* A bare id: a container's right below its pod, or Docker's below "docker". */
        if (r == RUNTIME_NONE && (after_pod || span_is(prev, "docker")) && is_id(c)) {
            copy_span(out->id, c);
            r = after_pod ? RUNTIME_CONTAINERD : RUNTIME_DOCKER;
        }
        if (r != RUNTIME_NONE) {
            out->runtime = r;
            if (k.pod)
                memcpy(out->pod_uid, k.uid, sizeof(k.uid));
            return true;
        }

        struct span n = c;
        if (span_is(prev, "lxc") || span_is(prev, "lxc.payload") || span_eat(&n, "lxc.payload.")) {
            if (!take_name(n, false, out))
                break;
            out->runtime = RUNTIME_LXC;
            return true;
        }
        /* n is c still: span_eat takes nothing off when the prefix is not there. */
        if (span_eat(&n, "lxc.monitor"))
            break; /* LXC's monitor process, outside the container */
        if (span_eat(&n, "machine-") && span_chop(&n, ".scope")) {
            struct span next, rest = path;
            if (next_component(&rest, &next) && span_is(next, "supervisor"))
                break; /* systemd-nspawn itself, outside the container */
            if (!take_name(n, true, out) || strncmp(out->id, "qemu-", 5) == 0)
                break; /* libvirt's virtual machines are not containers */
            out->runtime = RUNTIME_NSPAWN;
            return true;
        }

        bool was_pod = k.pod;
        kube_component(c, &k);
        after_pod = k.pod && !was_pod;
        prev = c;
    }
    memset(out, 0, sizeof(*out));
    return false;
}

/* A containerd identifier (containerd's identifiers.Validate): runs of
 * letters and digits joined by single '.', '_' or '-', 1 to max bytes. */
static bool is_ctrd_name(struct span c, size_t max)
{
    if (c.n == 0 || c.n > max)
        return false;
    bool after_sep = true;
    for (size_t i = 0; i < c.n; i++) {
        char ch = c.s[i];
        if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
            after_sep = false;
        else if ((ch == '.' || ch == '_' || ch == '-') && !after_sep)
            after_sep = true;
        else
            return false;
    }
    return !after_sep;
}

/* The containerd candidate of a path that names no container (see the
 * header): a systemd scope "<namespace>-<id>.scope" right below a slice, not
 * below a user's own manager, else the cgroupfs "/<namespace>/<id>". True
 * when the path has either shape. */
static bool ctrd_candidate(struct span path, struct container_id *out)
{
    struct span c, parent = {"", 0}, last = {"", 0};
    size_t n = 0;
    bool delegated = false;
    while (next_component(&path, &c)) {
        delegated = delegated || is_user_manager(c);
        parent = last;
        last = c;
        n++;
    }
    struct span slice = parent, stem = last;
    if (n >= 2 && !delegated && span_chop(&slice, ".slice") && span_chop(&stem, ".scope")) {
        if (!is_ctrd_name(stem, sizeof(out->ctrd_id) - 1) || !memchr(stem.s, '-', stem.n))
            return false;
        copy_span(out->ctrd_id, stem);
        return true;
    }
    if (n != 2 || !is_ctrd_name(parent, CTRD_NAME_MAX) || !is_ctrd_name(last, CTRD_NAME_MAX))
        return false;
    copy_span(out->ctrd_ns, parent);
    copy_span(out->ctrd_id, last);
    return true;
}

bool container_id_from_path(const char *path, struct container_id *out)
{
    struct span p = {path, strlen(path)};
    if (from_span(p, out))
        return true;
    ctrd_candidate(p, out);
    return false;
}

/* "N:controller,list:/path": the list holds name. */
static bool list_has(struct span list, const char *name)
{
    while (list.n)
        if (span_is(take_until(&list, ','), name))
            return true;
    return false;
}

bool container_id_parse(const char *text, struct container_id *out)
{
    struct span mem = {NULL, 0}, v2 = {NULL, 0}, rest = {text, strlen(text)};
    while (rest.n) {
        struct span line = take_until(&rest, '\n');
        struct span id = take_until(&line, ':');
        struct span ctrl = take_until(&line, ':');
        struct span path = line; /* empty when a ':' is missing */
        if (id.n == 0 || path.n == 0 || path.s[0] != '/')
            continue; /* not a line of /proc/PID/cgroup */
        if (span_is(id, "0") && ctrl.n == 0)
            v2 = path;
        else if (list_has(ctrl, "memory"))
            mem = path;
    }
    if ((mem.s && from_span(mem, out)) || (v2.s && from_span(v2, out)))
        return true;
    memset(out, 0, sizeof(*out));
    if (!(mem.s && ctrd_candidate(mem, out)) && v2.s)
        ctrd_candidate(v2, out);
    return false;
}

const char *container_runtime_name(enum container_runtime r)
{
    switch (r) {
    case RUNTIME_DOCKER:
        return "docker";
    case RUNTIME_CONTAINERD:
        return "containerd";
    case RUNTIME_CRIO:
        return "crio";
    case RUNTIME_PODMAN:
        return "podman";
    case RUNTIME_LXC:
        return "lxc";
    case RUNTIME_NSPAWN:
        return "nspawn";
    case RUNTIME_NONE:
        break;
    }
    return NULL;
}

