/* Removing a folder segment (joblib's memmapping folder) whole, under the
 * safety rules for directories (see unlinkdir.c). */
#ifndef SHMWATCH_UNLINKDIR_H
#define SHMWATCH_UNLINKDIR_H

#include "act/unlinkcheck.h"

/* Checks and (unless o->dry_run) removes the folder base of directory dir,
 * the plan's target t; fills res. */
void unlinkdir_in(const struct unlink_opts *o, const struct unlink_target *t, int dir,
                  const char *base, struct unlink_result *res);

#endif
