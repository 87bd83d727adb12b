/* What the parts of the config module share and nobody else needs. */
#ifndef SHMWATCH_CONFIG_PRIV_H
#define SHMWATCH_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "util/buf.h"

#define CONFIG_NOPTIONS 19

/* The field an option describes, in cfg. */
#define CONFIG_FIELD(cfg, o, type) ((type *)(void *)((char *)(cfg) + (o)->offset))

bool config_is_list(const struct config_option *o);

/* What a value of o's type looks like, for "expected X, got Y". */
const char *config_expected(const struct config_option *o);

/* The one validator. Sets a scalar option from text (null: the value was
 * YAML null); on failure appends the problem to msg and returns -EINVAL. */
int config_set_value(const struct config_option *o, struct config *cfg, const char *v, bool null,
                     struct buf *msg);

/* Sets a list option from n items (mounts: its mounts_where dropped first);
 * *bad is the index of the item at fault, or n when the list as a whole is. */
int config_set_items(const struct config_option *o, struct config *cfg, const char *const *items,
                     size_t n, size_t *bad, struct buf *msg);

#endif
