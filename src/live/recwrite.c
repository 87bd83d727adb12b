/* The recorder's records (recwrite.h). */
#include "live/recwrite.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/events.h"
#include "report/jsonw.h"
#include "report/report.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/xalloc.h"

char *recwrite_header(double interval_s, long long pid, bool all)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    char watch[32];
    if (pid)
        snprintf(watch, sizeof(watch), "pid %lld", pid);
    else
        snprintf(watch, sizeof(watch), "%s", all ? "all" : "host");
    struct buf b;
    buf_init(&b);
    struct jsonw w;
    jw_init(&w, &b);
    jw_obj(&w, NULL);
    jw_str(&w, "hostname", host[0] ? host : NULL);
    jw_dbl(&w, "interval_s", interval_s);
    jw_str(&w, "watch", watch);
    jw_str(&w, "version", SHMWATCH_VERSION);
    jw_obj_end(&w);
    /* Without its braces. */
    char *members = xstrndup(b.data + 1, b.len - 2);
    buf_free(&b);
    return members;
}

void recwrite_put(struct store *st, double t, const struct buf *b, char *msg, size_t n)
{
    if (store_write(st, t, b->data, b->len, msg, n) == 0 && msg[0]) {
        /* The store made room by dropping its oldest file: recorded too. */
        struct event_list note = {0};
        events_recorder(&note, clock_wall(), "disk_full", msg);
        struct buf line;
        buf_init(&line);
        report_event_json(&line, &note.items[0]);
        char again[512];
        store_write(st, note.items[0].t, line.data, line.len, again, sizeof(again));
        buf_free(&line);
        event_list_free(&note);
    }
}
