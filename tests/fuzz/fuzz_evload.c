/* evload_build: a recording's event line read back into an event (replay's
 * events page), then written again and told in words, as replay shows it. */
#include "fuzz.h"

#include "model/evline.h"
#include "model/evload.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/jsondoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct jd *doc = jd_parse((const char *)data, size, err, sizeof(err));
    if (!doc)
        return 0;
    struct event e;
    if (evload_build(doc, 1780000000.5, &e, err, sizeof(err)) == 0) {
        struct buf out;
        buf_init(&out);
        report_event_json(&out, &e);
        buf_free(&out);
        char text[320];
        evline_text(&e, NULL, text, sizeof(text));
        event_clear(&e);
    }
    jd_free(doc);
    return 0;
}
