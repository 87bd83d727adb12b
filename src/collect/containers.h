/* The names of the container a process is in, as the host knows them.
 *
 * Which container: util/container_id.h reads the host's view of
 * /proc/PID/cgroup (the runtime, the full id, the pod's uid). The names come
 * from the runtimes' state on the host's disk, none of it a documented API,
 * so every file is read defensively (below the root fd, never following a
 * symbolic link at its end or out of the root, small regular files only) and
 * an absent, unreadable, huge or malformed one is simply no answer (NULL):
 *   - Docker: <data-root>/containers/<id>/config.v2.json (data-root from
 *     /etc/docker/daemon.json, else /var/lib/docker): "Name" without its
 *     leading '/', "Config"."Hostname", and the pod and namespace among
 *     "Config"."Labels" (cri-dockerd's io.kubernetes.* labels). Found there,
 *     the runtime is Docker whatever the cgroup path said: cri-dockerd and
 *     --cgroup-parent put Docker containers under kubepods paths.
 *   - containerd: the task bundle /run/containerd/io.containerd.runtime.v2.task/
 *     <namespace>/<id>/config.json (namespaces k8s.io, moby (Docker's own:
 *     then the runtime is Docker) and default): the OCI spec's "hostname" and
 *     the annotations of the CRI plugin (io.kubernetes.cri.container-name,
 *     sandbox-name, sandbox-namespace) and of nerdctl (nerdctl/name).
 *     A container of containerd's own clients (ctr), whose cgroup has only
 *     the shape of one (util/container_id.h: /<namespace>/<id>, or
 *     <namespace>-<id>.scope), is one when its bundle directory is there, in
 *     any namespace: then its id is the cgroup's (any containerd identifier,
 *     not only a digest), its namespace is kept, and its name is the OCI
 *     spec's annotations' else, when the id is no digest, the id (ctr's
 *     ids are the names its user chose). Else it is in no container.
 *   - CRI-O and podman: containers/storage, whose graph root and run root are
 *     graphroot and runroot of the [storage] table of
 *     /etc/containers/storage.conf (else of /usr/share/containers/storage.conf,
 *     the packaged default, as containers/storage reads them), else
 *     /var/lib/containers/storage and /run/containers/storage: the OCI
 *     spec overlay-containers/<id>/userdata/config.json of the run root
 *     (CRI-O's) and of the graph root (podman's): "hostname" and CRI-O's
 *     annotations (io.kubernetes.container.name, io.kubernetes.pod.name,
 *     io.kubernetes.pod.namespace); and the graph root's
 *     overlay-containers/containers.json, whose entry of the id has the
 *     name in "names" (podman's --name). Found there, a pod's container is
 *     CRI-O's and any other podman's.
 *   - Kubernetes (any runtime): /var/log/containers/<pod>_<namespace>_<container>-<id>.log
 *     gives the pod, its namespace and the container's name from the id;
 *     /var/log/pods/<namespace>_<pod>_<uid>/<container>/ the pod and namespace
 *     from the pod's uid, and the container's name when the pod has only one.
 *   - lxc and nspawn name their containers in the cgroup path itself.
 *   - The hostname: the runtime's (Docker's Config.Hostname, an OCI spec's
 *     "hostname"), else the first line of the container's own /etc/hostname
 *     (read through /proc/PID/root), which is a pod's name in Kubernetes.
 * Every id of 64 hex digits is looked up in all of these, in this order; the
 * first answer for a field is kept. Nothing is looked up for a process that
 * is in no container. */
#ifndef SHMWATCH_CONTAINERS_H
#define SHMWATCH_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/container_id.h"
#include "util/ctrref.h"

/* Every string is owned (containers_free), NULL when unknown, and bytes as
 * found: escape them when writing (esc_json, esc_term). */
struct container_info {
    enum container_runtime runtime; /* RUNTIME_NONE: not in a container, all NULL */
    char *id;                       /* 64 hex digits; for lxc and nspawn the name */
    char *name;                     /* Docker's, the Kubernetes container's, lxc's, nspawn's */
    char *pod_uid;                  /* with dashes, or 32 hex digits (a static pod) */
    char *pod;                      /* the pod's name */
    char *namespace;                /* the pod's namespace */
    char *hostname;                 /* the runtime's, else the container's /etc/hostname */
    char *containerd_namespace;     /* containerd's namespace of a container it runs
                                     * (k8s.io, default, a ctr user's own) */
};

/* Size caps of the files read: a bigger file is no answer. */
enum {
    CONTAINERS_JSON_MAX = 1 << 20, /* config.v2.json, daemon.json */
    CONTAINERS_HOSTNAME_MAX = 4096,
};

/* Fills out for the container cid names. hostroot: a directory fd on the
 * host's root (the runtimes' state is read below it); ctr_root: one on the
 * container's root (/proc/PID/root), or -1 for none. Absent files are
 * normal: their fields stay NULL. Returns 0. */
int containers_lookup(int hostroot, const struct container_id *cid, int ctr_root,
                      struct container_info *out);

/* The same for the process whose /proc/PID directory piddir is: reads its
 * cgroup file and looks the names up, the hostname through its root.
 * Returns 0 (out->runtime RUNTIME_NONE: not in a container), or the -errno
 * of reading the cgroup file (the process is gone, or not ours to read). */
int containers_collect(int hostroot, int piddir, struct container_info *out);

/* The same from the text of its cgroup file, read already. */
void containers_collect_text(int hostroot, int piddir, const char *cgroup_text,
                             struct container_info *out);

void containers_free(struct container_info *ci);

/* Whether a and b name one container: the same runtime and id, and the same
 * containerd namespace (both NULL or equal), since a containerd id is unique
 * only within its namespace. A container of no id is the same as none. */
bool containers_same(const struct container_info *a, const struct container_info *b);

/* How a record names ci: its id and containerd namespace (util/ctrref.h);
 * the strings are ci's. */
struct container_ref containers_ref(const struct container_info *ci);

/* The first line of etc/hostname below a container's root (a directory fd on
 * /proc/PID/root), read as every file here is: a symbolic link is not
 * followed (through /proc/PID/root an absolute one would lead to the host's
 * file of that name), a file of CONTAINERS_HOSTNAME_MAX bytes or more is not
 * read. A new string, or NULL. */
char *containers_hostname(int ctr_root);

/* --- Pure parsers, exposed for the unit tests and the fuzzers ------------ */

/* The text of a Docker config.v2.json: its "Name" (the leading '/' taken
 * off) and "Config"."Hostname"; each NULL when absent, empty or not a string,
 * and both when the document is malformed. True when the document is valid. */
bool containers_docker_config(const char *text, size_t len, char **name, char **hostname);

/* The text of a containers/storage storage.conf (TOML; what is read of it
 * is a subset: lines "key = \"value\"" or 'value' of the [storage] table):
 * its graphroot and runroot, new strings, each NULL when absent, not a
 * plain string (one with escapes is no answer) or not an absolute path. */
void containers_storage_conf(const char *text, char **graphroot, char **runroot);

/* A directory of /var/log/pods, "<namespace>_<pod>_<uid>": true, with new
 * strings, when it is one and ends in uid. */
bool containers_pod_dir(const char *entry, const char *uid, char **ns, char **pod);

/* A file of /var/log/containers, "<pod>_<namespace>_<container>-<id>.log":
 * true, with new strings, when it is one and names id. */
bool containers_log_name(const char *entry, const char *id, char **pod, char **ns,
                         char **container);

#endif
