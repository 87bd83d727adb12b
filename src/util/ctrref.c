/* A container as a record names it (util/ctrref.h). */
#include "util/ctrref.h"

#include <string.h>

#include "util/buf.h"
#include "util/container_id.h"
#include "util/xalloc.h"

bool container_ref_same(const struct container_ref *a, const struct container_ref *b)
{
    if (!a->id || !b->id || strcmp(a->id, b->id) != 0)
        return false;
    if (!a->ns_known || !b->ns_known)
        return true;
    return a->ns && b->ns ? strcmp(a->ns, b->ns) == 0 : !a->ns && !b->ns;
}

struct container_ref container_ref_read(const struct jd *o, const char *id_key)
{
    const struct jd *ns = jd_get(o, "containerd_namespace");
    return (struct container_ref){
        .id = jd_str(jd_get(o, id_key), NULL),
        .ns = jd_str(ns, NULL),
        .ns_known = ns != NULL,
    };
}

char *container_label(const char *ns, const char *name, const char *id)
{
    bool digest = id && container_id_full(id);
    if (name)
        return ns && !digest ? str_printf("%s/%s", ns, name) : xstrdup(name);
    if (!id)
        return NULL;
    if (digest)
        return str_printf("%.12s", id);
    return ns ? str_printf("%s/%s", ns, id) : xstrdup(id);
}
