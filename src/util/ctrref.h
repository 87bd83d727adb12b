/* How a record names a container: a snapshot's process or group, an event,
 * an end that `why` tells. A container is its id and, since containerd's ids
 * are unique only within a namespace, its containerd namespace
 * (collect/containers.h, containers_same); the JSON says it in
 * "containerd_namespace" beside the id. A record without that member (an
 * older recording's) names a container by its id alone. No I/O. */
#ifndef SHMWATCH_CTRREF_H
#define SHMWATCH_CTRREF_H

#include <stdbool.h>

#include "util/jsondoc.h"

struct container_ref {
    const char *id; /* NULL: in no container (the host's) */
    const char *ns; /* its containerd namespace, NULL for none */
    bool ns_known;  /* false: the record does not say; the id alone names it */
};

/* Whether a and b name one container: the same id, and the same containerd
 * namespace (both NULL or equal) where both say it. Never when either id is
 * NULL. */
bool container_ref_same(const struct container_ref *a, const struct container_ref *b);

/* The container record o names: its member id_key ("container" of a
 * process, a group or an event; "id" of a mount's container) and its
 * "containerd_namespace", known when o has that member. The strings are o's. */
struct container_ref container_ref_read(const struct jd *o, const char *id_key);

/* How a container is named for a person: its name, else its id, a digest
 * cut to its first 12 digits as docker ps shows it. An id a person chose
 * (ctr run ... web) is unique only within its containerd namespace ns,
 * which then comes first: "NAMESPACE/NAME"; a digest (the kubelet's,
 * nerdctl's, Docker's) is unique on the node and needs none. id is the
 * whole id (NULL when unknown: then ns, if any, comes first). A new string;
 * NULL when there is neither name nor id. The bytes are as given: escape
 * them when writing. */
char *container_label(const char *ns, const char *name, const char *id);

#endif
