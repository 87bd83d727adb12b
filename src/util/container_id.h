/* Which container a process is in, from the host's view of its
 * /proc/PID/cgroup. Pure text parsing, no I/O: the names behind an id are
 * looked up by collect/containers.h.
 *
 * The forms recognised (v1 memory line or v2 "0::" line, the cgroupfs and
 * the systemd drivers of each runtime):
 *   Docker      /docker/<id>, .../docker-<id>.scope
 *   containerd  .../cri-containerd-<id>.scope, .../nerdctl-<id>.scope, and a
 *               bare <id> right below a Kubernetes pod (kubepods/.../pod<uid>/<id>)
 *   CRI-O       .../crio-<id>[.scope]        (crio-conmon-<id> is its monitor: none)
 *   podman      .../libpod-<id>[.scope]      (libpod-conmon-<id> is its monitor: none)
 *   LXC         /lxc/<name>, /lxc.payload/<name>, /lxc.payload.<name> (lxc.monitor: none)
 *   nspawn      /machine.slice/machine-<name>.scope[/payload] (its supervisor, and
 *               libvirt's machine-qemu-... virtual machines: none)
 * A Kubernetes pod is kubepods[/<qos>]/pod<uid>/ with the cgroupfs driver and
 * kubepods.slice/kubepods[-<qos>].slice/kubepods[-<qos>]-pod<uid_with_underscores>.slice/
 * with systemd's (each slice name may start with the kubelet's --cgroup-root,
 * e.g. kind's "kubelet-kubepods-..."); guaranteed pods have no QoS level; a
 * static pod's uid is 32 hex digits without dashes. The outermost container on the path wins (Docker
 * in Docker, a kind node): it is the one the host's runtime knows.
 * The <id> is 64 lowercase hex digits. Nothing here is a documented API, so
 * anything else, malformed or not, is "not in a container", never an error.
 *
 * A container that containerd runs for a client of its own (ctr) has a
 * cgroup of a shape only: /<namespace>/<id> with cgroupfs (containerd's
 * default cgroupsPath), or a systemd scope <namespace>-<id>.scope below a
 * slice, both parts containerd identifiers (letters and digits, runs of
 * them joined by single '.', '_' or '-', at most 76 bytes). Any two-level
 * cgroup (/system.slice/cron.service) has the first shape, so such a path is
 * "not in a container" here, with the candidate in ctrd_ns and ctrd_id:
 * collect/containers.h confirms it by containerd's task bundle directory. */
#ifndef SHMWATCH_CONTAINER_ID_H
#define SHMWATCH_CONTAINER_ID_H

#include <stdbool.h>

enum container_runtime {
    RUNTIME_NONE, /* not in a container (or a form not recognised) */
    RUNTIME_DOCKER,
    RUNTIME_CONTAINERD,
    RUNTIME_CRIO,
    RUNTIME_PODMAN,
    RUNTIME_LXC,
    RUNTIME_NSPAWN,
};

enum {
    CONTAINER_ID_HEX = 64,  /* the length of a full container id */
    CONTAINER_ID_MAX = 255, /* room for an lxc or nspawn name */
    CTRD_NAME_MAX = 76,     /* a containerd identifier (namespace, container id) */
    POD_UID_MAX = 36,       /* 8-4-4-4-12 hex digits with dashes */
};

struct container_id {
    enum container_runtime runtime;
    /* The full id (64 hex digits), or for lxc and nspawn the container's
     * name (systemd's \xNN escapes undone: any byte but NUL may be there). */
    char id[CONTAINER_ID_MAX + 1];
    char pod_uid[POD_UID_MAX + 1]; /* "" when not in a pod; dashes restored */
    /* The container's cgroup lies below a user's own systemd manager
     * (user@UID.service): a subtree delegated to that user, who may name
     * cgroups in it at will (a rootless podman's or Docker's, or any
     * user's claim to be another container): its id and pod uid are the
     * user's word, never looked up in the host's runtimes' state. */
    bool user_delegated;
    /* With runtime RUNTIME_NONE, a containerd candidate (see above): the
     * cgroupfs shape gives ctrd_ns and ctrd_id; the scope shape gives
     * ctrd_ns "" and ctrd_id "<namespace>-<id>", which any of its '-' may
     * part. Both "" when the path has neither shape. */
    char ctrd_ns[CTRD_NAME_MAX + 1];
    char ctrd_id[2 * CTRD_NAME_MAX + 2];
};

/* One cgroup path, e.g. "/system.slice/docker-<id>.scope". True when it names
 * a container; false (and out cleared, runtime RUNTIME_NONE, but for a
 * containerd candidate in ctrd_ns and ctrd_id) otherwise. */
bool container_id_from_path(const char *path, struct container_id *out);

/* The whole text of /proc/PID/cgroup as the host sees it: the v1 line of the
 * memory controller when there is one and it names a container, else the v2
 * "0::" line; when neither does, a containerd candidate of the one line,
 * then the other. Same result as container_id_from_path. */
bool container_id_parse(const char *cgroup_text, struct container_id *out);

/* True when id is a full container id: CONTAINER_ID_HEX lowercase hex digits. */
bool container_id_full(const char *id);

/* "docker", "containerd", "crio", "podman", "lxc", "nspawn"; NULL for none. */
const char *container_runtime_name(enum container_runtime r);

#endif
