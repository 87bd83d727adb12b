/* The names of a container from the runtimes' state on the host (see the
 * header for which files and why they are read the way they are). */
#include "collect/containers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/beneath.h"
#include "util/buf.h"
#include "util/fileio.h"
#include "util/jsonget.h"
#include "util/xalloc.h"

/* --- Pure parsers ------------------------------------------------------- */

/* A string that says nothing is no answer. */
static char *nonempty(char *s)
{
    if (s && !*s) {
        free(s);
        return NULL;
    }
    return s;
}

bool containers_docker_config(const char *text, size_t len, char **name, char **hostname)
{
    static const char *const name_path[] = {"Name"};
    static const char *const host_path[] = {"Config", "Hostname"};
    *name = *hostname = NULL;
    char *n;
    bool valid = jsonget_string(text, len, name_path, 1, &n);
    if (valid) {
        /* Docker stores "/name"; the user knows it as "name". */
        if (n[0] == '/')
            memmove(n, n + 1, strlen(n));
        *name = nonempty(n);
    }
    char *h;
    if (jsonget_string(text, len, host_path, 2, &h)) {
        valid = true;
        *hostname = nonempty(h);
    }
    return valid;
}

/* Splits s into exactly three non-empty '_'-separated parts (Kubernetes
 * names and uids hold no '_'). */
static bool split3(const char *s, size_t n, char **a, char **b, char **c)
{
    const char *u1 = memchr(s, '_', n);
    const char *u2 = u1 ? memchr(u1 + 1, '_', n - (size_t)(u1 + 1 - s)) : NULL;
    if (!u2 || memchr(u2 + 1, '_', n - (size_t)(u2 + 1 - s)))
        return false;
    size_t la = (size_t)(u1 - s), lb = (size_t)(u2 - u1 - 1), lc = n - (size_t)(u2 + 1 - s);
    if (!la || !lb || !lc)
        return false;
    *a = xstrndup(s, la);
    *b = xstrndup(u1 + 1, lb);
    *c = xstrndup(u2 + 1, lc);
    return true;
}

bool containers_pod_dir(const char *entry, const char *uid, char **ns, char **pod)
{
    char *u;
    if (!split3(entry, strlen(entry), ns, pod, &u))
        return false;
    bool ok = strcmp(u, uid) == 0;
    free(u);
    if (!ok) {
        free(*ns);
        free(*pod);
        *ns = *pod = NULL;
    }
    return ok;
}

bool containers_log_name(const char *entry, const char *id, char **pod, char **ns, char **container)
{
    size_t n = strlen(entry), idn = strlen(id);
    /* "-<id>.log" at the end */
    if (!idn || n < idn + 5 || strcmp(entry + n - 4, ".log") != 0 ||
        memcmp(entry + n - 4 - idn, id, idn) != 0 || entry[n - 5 - idn] != '-')
        return false;
    return split3(entry, n - 5 - idn, pod, ns, container);
}

/* A TOML string value, "basic" without escapes or 'literal', then nothing
 * but a comment: a new string, or NULL. */
static char *toml_string(const char *v, const char *end)
{
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    if (v == end || (*v != '"' && *v != '\''))
        return NULL;
    const char *close = memchr(v + 1, *v, (size_t)(end - v - 1));
    if (!close || (*v == '"' && memchr(v + 1, '\\', (size_t)(close - v - 1))))
        return NULL;
    for (const char *p = close + 1; p < end && *p != '#'; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r')
            return NULL;
    return nonempty(xstrndup(v + 1, (size_t)(close - v - 1)));
}

void containers_storage_conf(const char *text, char **graphroot, char **runroot)
{
    *graphroot = *runroot = NULL;
    bool in_storage = false;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        const char *k = p;
        p = nl ? nl + 1 : end;
        while (k < end && (*k == ' ' || *k == '\t'))
            k++;
        if (k < end && *k == '[') {
            /* A table header: [storage], or another table ([storage.options]...). */
            const char *close = memchr(k, ']', (size_t)(end - k));
            in_storage = close && close - k == 8 && memcmp(k, "[storage]", 9) == 0;
            continue;
        }
        size_t klen = strcspn(k, " \t=\n");
        const char *eq = k + klen;
        while (eq < end && (*eq == ' ' || *eq == '\t'))
            eq++;
        if (!in_storage || eq >= end || *eq != '=')
            continue;
        char **field = klen == 9 && memcmp(k, "graphroot", 9) == 0 ? graphroot
                       : klen == 7 && memcmp(k, "runroot", 7) == 0 ? runroot
                                                                   : NULL;
        if (!field)
            continue;
        char *v = toml_string(eq + 1, end);
        if (v && v[0] != '/') { /* relative to what? no answer */
            free(v);
            v = NULL;
        }
        free(*field);
        *field = v; /* the last one counts, as TOML allows only one */
    }
}

/* --- Reading the host's state ------------------------------------------- */

/* Sets *field to value when it is still unknown; frees value otherwise. */
static void fill(char **field, char *value)
{
    if (!*field)
        *field = value;
    else
        free(value);
}

/* Docker's data root: "data-root" of /etc/docker/daemon.json, else the default. */
static char *docker_root(int hostroot, struct buf *text)
{
    static const char *const key[] = {"data-root"};
    char *dir = NULL;
    if (read_beneath(hostroot, "etc/docker/daemon.json", text, CONTAINERS_JSON_MAX) == 0 &&
        jsonget_string(text->data, text->len, key, 1, &dir) && dir[0] == '/')
        return dir;
    free(dir);
    return xstrdup("var/lib/docker");
}

/* A string at the path in a state file's text; NULL when absent or empty. */
static char *json_at(const struct buf *text, const char *k1, const char *k2, const char *k3)
{
    const char *path[] = {k1, k2, k3};
    char *s;
    if (!jsonget_string(text->data, text->len, path, k3 ? 3 : k2 ? 2 : 1, &s))
        return NULL;
    return nonempty(s);
}

/* True when rootfd/path is a file that is there (read or not: a link, a
 * FIFO, a huge or malformed file all say that its runtime knows the id). */
static bool read_state(int hostroot, const char *path, struct buf *text)
{
    int rc = read_beneath(hostroot, path, text, CONTAINERS_JSON_MAX);
    if (rc < 0)
        buf_reset(text);
    return rc == 0 || rc == -EFBIG || rc == -EINVAL || rc == -ELOOP;
}

static void docker_lookup(int hostroot, const char *id, struct buf *text, struct buf *path,
                          struct container_info *out)
{
    char *root = docker_root(hostroot, text);
    buf_reset(path);
    buf_printf(path, "%s/containers/%s/config.v2.json", root, id);
    if (read_state(hostroot, path->data, text)) {
        /* The id is Docker's, even when the file says nothing usable. */
        out->runtime = RUNTIME_DOCKER;
        char *name = NULL, *host = NULL;
        containers_docker_config(text->data, text->len, &name, &host);
        fill(&out->name, name);
        fill(&out->hostname, host);
        /* The Kubernetes labels Docker keeps for cri-dockerd's containers. */
        fill(&out->pod, json_at(text, "Config", "Labels", "io.kubernetes.pod.name"));
        fill(&out->namespace, json_at(text, "Config", "Labels", "io.kubernetes.pod.namespace"));
    }
    free(root);
}

/* An OCI runtime spec (config.json of a bundle): the hostname, and the
 * names that containerd's CRI plugin, CRI-O and nerdctl annotate. */
static void oci_spec(const struct buf *text, struct container_info *out)
{
    fill(&out->name, json_at(text, "annotations", "io.kubernetes.cri.container-name", NULL));
    fill(&out->name, json_at(text, "annotations", "io.kubernetes.container.name", NULL));
    fill(&out->name, json_at(text, "annotations", "nerdctl/name", NULL));
    fill(&out->pod, json_at(text, "annotations", "io.kubernetes.cri.sandbox-name", NULL));
    fill(&out->pod, json_at(text, "annotations", "io.kubernetes.pod.name", NULL));
    fill(&out->namespace,
         json_at(text, "annotations", "io.kubernetes.cri.sandbox-namespace", NULL));
    fill(&out->namespace, json_at(text, "annotations", "io.kubernetes.pod.namespace", NULL));
    fill(&out->hostname, json_at(text, "hostname", NULL, NULL));
}

/* containerd's task bundles, <namespace>/<id>/ below this directory. */
#define CONTAINERD_TASKS "run/containerd/io.containerd.runtime.v2.task"

/* The namespaces whose bundles a full id is looked up in. */
static const char *const containerd_namespaces[] = {"k8s.io", "moby", "default"};

/* Whose containers a containerd namespace holds: "moby" is Docker's own. */
static enum container_runtime containerd_runtime(const char *ns)
{
    return strcmp(ns, "moby") == 0 ? RUNTIME_DOCKER : RUNTIME_CONTAINERD;
}

static void containerd_lookup(int hostroot, const char *id, struct buf *text, struct buf *path,
                              struct container_info *out)
{
    for (size_t i = 0; i < sizeof(containerd_namespaces) / sizeof(containerd_namespaces[0]); i++) {
        buf_reset(path);
        const char *ns = containerd_namespaces[i];
        buf_printf(path, "%s/%s/%s/config.json", CONTAINERD_TASKS, ns, id);
        if (!read_state(hostroot, path->data, text))
            continue;
        if (out->runtime != RUNTIME_DOCKER)
            out->runtime = containerd_runtime(ns);
        if (out->runtime == RUNTIME_CONTAINERD)
            fill(&out->containerd_namespace, xstrdup(ns));
        oci_spec(text, out);
        break;
    }
}

/* containerd's task bundle directory <namespace>/<id> (nslen bytes of ns),
 * below the root and not reached through a symbolic link at its end; its
 * path is left in path. */
static bool bundle_dir(int hostroot, struct buf *path, const char *ns, size_t nslen, const char *id)
{
    buf_reset(path);
    buf_printf(path, "%s/%.*s/%s", CONTAINERD_TASKS, (int)nslen, ns, id);
    int fd = open_beneath(hostroot, path->data, O_PATH | O_DIRECTORY);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* A container of containerd's own clients (ctr), from the cgroup's
 * candidate (util/container_id.h): its bundle directory is looked for in the
 * namespace the cgroupfs path names, or in one that a '-' of the scope's
 * name parts off. */
static void containerd_candidate(int hostroot, const struct container_id *cid, struct buf *text,
                                 struct buf *path, struct container_info *out)
{
    const char *ns = cid->ctrd_ns[0] ? cid->ctrd_ns : cid->ctrd_id, *id = cid->ctrd_id;
    size_t nslen = strlen(cid->ctrd_ns);
    bool found = false;
    if (cid->ctrd_ns[0]) {
        found = bundle_dir(hostroot, path, ns, nslen, id);
    } else { /* the scope's "<namespace>-<id>": parted at each '-' in turn */
        for (const char *dash = strchr(ns, '-'); dash && !found; dash = strchr(dash + 1, '-')) {
            nslen = (size_t)(dash - ns);
            id = dash + 1;
            found = bundle_dir(hostroot, path, ns, nslen, id);
        }
    }
    if (found) {
        out->containerd_namespace = xstrndup(ns, nslen);
        out->runtime = containerd_runtime(out->containerd_namespace);
        out->id = xstrdup(id);
        buf_adds(path, "/config.json");
        if (read_state(hostroot, path->data, text))
            oci_spec(text, out);
        if (!container_id_full(id))
            fill(&out->name, xstrdup(id));
    }
}

/* containers/storage's graph root and run root, as the header says. */
static void storage_roots(int hostroot, struct buf *text, char **graphroot, char **runroot)
{
    *graphroot = *runroot = NULL;
    if (read_beneath(hostroot, "etc/containers/storage.conf", text, CONTAINERS_JSON_MAX) == 0 ||
        read_beneath(hostroot, "usr/share/containers/storage.conf", text, CONTAINERS_JSON_MAX) == 0)
        containers_storage_conf(text->data, graphroot, runroot);
    if (!*graphroot)
        *graphroot = xstrdup("var/lib/containers/storage");
    if (!*runroot)
        *runroot = xstrdup("run/containers/storage");
}

/* containers/storage, shared by CRI-O and podman (the header says what is
 * read there and whose a container found there is). */
static void storage_lookup(int hostroot, const char *id, struct buf *text, struct buf *path,
                           struct container_info *out)
{
    static const char *const names_path[] = {"names", JSONGET_FIRST};
    char *graphroot, *runroot;
    storage_roots(hostroot, text, &graphroot, &runroot);
    bool found = false;
    const char *roots[] = {runroot, graphroot};
    for (size_t i = 0; i < 2; i++) {
        buf_reset(path);
        buf_printf(path, "%s/overlay-containers/%s/userdata/config.json", roots[i], id);
        if (read_state(hostroot, path->data, text)) {
            found = true;
            oci_spec(text, out);
        }
    }
    buf_reset(path);
    buf_printf(path, "%s/overlay-containers/containers.json", graphroot);
    char *name;
    if (read_state(hostroot, path->data, text) &&
        jsonget_string_where(text->data, text->len, "id", id, names_path, 2, &name)) {
        found = true;
        fill(&out->name, nonempty(name));
    }
    if (found && out->runtime != RUNTIME_CRIO && out->runtime != RUNTIME_PODMAN &&
        out->runtime != RUNTIME_DOCKER)
        out->runtime = out->pod || out->pod_uid ? RUNTIME_CRIO : RUNTIME_PODMAN;
    free(graphroot);
    free(runroot);
}

/* Calls fn on each entry of the directory rootfd/path (not "." or "..")
 * until it returns true. */
static void each_entry(int rootfd, const char *path,
                       bool (*fn)(int dir, const char *name, void *arg), void *arg)
{
    int fd = open_beneath(rootfd, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
            fn(dirfd(d), de->d_name, arg))
            break;
    closedir(d);
}

struct kube_search {
    const char *key; /* the id or the pod uid */
    struct container_info *out;
    char *only_dir; /* the container directory of a pod, when there is one */
    size_t ndirs;
};

static bool log_entry(int dir, const char *name, void *arg)
{
    (void)dir;
    struct kube_search *ks = arg;
    char *pod, *ns, *container;
    if (!containers_log_name(name, ks->key, &pod, &ns, &container))
        return false;
    fill(&ks->out->pod, pod);
    fill(&ks->out->namespace, ns);
    fill(&ks->out->name, container);
    return true;
}

static bool container_dir(int dir, const char *name, void *arg)
{
    struct kube_search *ks = arg;
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        return false;
    if (++ks->ndirs == 1)
        ks->only_dir = xstrdup(name);
    return ks->ndirs > 1;
}

static bool pod_entry(int dir, const char *name, void *arg)
{
    struct kube_search *ks = arg;
    char *ns, *pod;
    if (!containers_pod_dir(name, ks->key, &ns, &pod))
        return false;
    fill(&ks->out->pod, pod);
    fill(&ks->out->namespace, ns);
    each_entry(dir, name, container_dir, ks);
    if (ks->ndirs == 1)
        fill(&ks->out->name, ks->only_dir);
    else
        free(ks->only_dir);
    ks->only_dir = NULL;
    return true;
}

char *containers_hostname(int ctr_root)
{
    struct buf text;
    buf_init(&text);
    char *name = NULL;
    if (read_beneath(ctr_root, "etc/hostname", &text, CONTAINERS_HOSTNAME_MAX) == 0) {
        char *cur = text.data, *line = next_line(&cur);
        if (line && *line)
            name = xstrdup(line);
    }
    buf_free(&text);
    return name;
}

int containers_lookup(int hostroot, const struct container_id *cid, int ctr_root,
                      struct container_info *out)
{
    memset(out, 0, sizeof(*out));
    struct buf text, path; /* the lookups' scratch: each fills them before reading */
    buf_init(&text);
    buf_init(&path);
    if (cid->runtime == RUNTIME_NONE) {
        /* A containerd candidate is a container once its bundle is found. */
        if (cid->ctrd_id[0])
            containerd_candidate(hostroot, cid, &text, &path, out);
    } else {
        out->runtime = cid->runtime;
        out->id = xstrdup(cid->id);
        if (cid->pod_uid[0])
            out->pod_uid = xstrdup(cid->pod_uid);
        if (cid->runtime == RUNTIME_LXC || cid->runtime == RUNTIME_NSPAWN)
            out->name = xstrdup(cid->id);
        /* A cgroup a user may name at will (below user@UID.service) is no
         * proof of the id: the host's runtimes' state, which would lend it a
         * real container's or pod's names, is not asked. */
        if (container_id_full(cid->id) && !cid->user_delegated) {
            docker_lookup(hostroot, cid->id, &text, &path, out);
            containerd_lookup(hostroot, cid->id, &text, &path, out);
            storage_lookup(hostroot, cid->id, &text, &path, out);
            struct kube_search ks = {.key = cid->id, .out = out};
            each_entry(hostroot, "var/log/containers", log_entry, &ks);
        }
        if (out->pod_uid && !cid->user_delegated) {
            struct kube_search ks = {.key = out->pod_uid, .out = out};
            each_entry(hostroot, "var/log/pods", pod_entry, &ks);
        }
    }
    if (out->runtime != RUNTIME_NONE && !out->hostname && ctr_root >= 0)
        out->hostname = containers_hostname(ctr_root);
    buf_free(&text);
    buf_free(&path);
    return 0;
}

int containers_collect(int hostroot, int piddir, struct container_info *out)
{
    struct buf text;
    buf_init(&text);
    int rc = read_file_at(piddir, "cgroup", &text, READ_SMALL_MAX);
    if (rc == 0)
        containers_collect_text(hostroot, piddir, text.data, out);
    else
        memset(out, 0, sizeof(*out));
    buf_free(&text);
    return rc;
}

void containers_collect_text(int hostroot, int piddir, const char *cgroup_text,
                             struct container_info *out)
{
    memset(out, 0, sizeof(*out));
    struct container_id cid;
    if (!container_id_parse(cgroup_text, &cid) && !cid.ctrd_id[0])
        return;
    int root = openat(piddir, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    containers_lookup(hostroot, &cid, root, out);
    if (root >= 0)
        close(root);
}

void containers_free(struct container_info *ci)
{
    free(ci->id);
    free(ci->name);
    free(ci->pod_uid);
    free(ci->pod);
    free(ci->namespace);
    free(ci->hostname);
    free(ci->containerd_namespace);
    memset(ci, 0, sizeof(*ci));
}

bool containers_same(const struct container_info *a, const struct container_info *b)
{
    struct container_ref ra = containers_ref(a), rb = containers_ref(b);
    return a->runtime == b->runtime && container_ref_same(&ra, &rb);
}

struct container_ref containers_ref(const struct container_info *ci)
{
    return (struct container_ref){.id = ci->id, .ns = ci->containerd_namespace, .ns_known = true};
}
