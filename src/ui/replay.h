/* The dashboard on a recording (`shmwatch replay`): in place of the
 * poller's scans, the snapshots of a store (store/store.h), each read back
 * into a scan and its model (model/snapload.h) when it is shown, so that the
 * same screens draw it. One snapshot is read per step: the store's index
 * says where each record is, and only the line shown is parsed. */
#ifndef SHMWATCH_UI_REPLAY_H
#define SHMWATCH_UI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"
#include "ui/poller.h"

struct replay {
    struct store_index ix;
    size_t shown; /* the snapshot on screen (an index into ix.items) */
    size_t pos;   /* where the steps start from: the snapshot shown, or the
                   * event jumped to last */
    size_t nsnaps; /* snapshots in the index */
    /* Each event entry's line on the events page once it has been read
     * (NULL: not yet), by entry: a step reads only the events it has not
     * shown before. */
    struct poller_event **told;
};

/* Opens the recording in dir at time at (Unix seconds; at_set false: its
 * newest snapshot) and reads that snapshot into *first. 0, or 1 with a
 * one-line reason in err: no such directory, nothing recorded, no
 * snapshot, none at that time, a snapshot that cannot be read. */
int replay_open(const char *dir, bool at_set, double at, struct replay **out, struct snap **first,
                char *err, size_t n);
void replay_close(struct replay *r);

struct ui;
/* Puts s (the snapshot of entry) on u's screens: its gauges at the
 * recorded time, the rows. onward: one step forward from the snapshot
 * shown, whose fill history then goes on (else it begins again). */
void replay_show(struct ui *u, struct snap *s, size_t entry, bool onward);

/* The last entry whose events the screen lists: the event jumped to last
 * ({ }), else the snapshot shown with the events its scan told (written
 * after it, of its time). */
size_t replay_moment(const struct replay *r);

/* Puts the recording's events up to the moment shown (replay_moment) on
 * u's events line and page, in the live dashboard's words (model/evline.h;
 * a Bus error with the fill of its /dev/shm in the snapshot before it). */
void replay_events(struct ui *u);

/* The shown snapshot's place among the recording's snapshots, from 1. */
size_t replay_ordinal(const struct replay *r);

/* The time of entry i as the title shows it ("2026-12-05 03:12:07", local
 * time). */
void replay_time_text(const struct replay *r, size_t i, char *dst, size_t n);

#endif
