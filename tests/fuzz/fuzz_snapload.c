/* snapload_build: a recording's snapshot line read back into a scan and a
 * model (replay), then every report written from it, as the screens read
 * the same model. */
#include "fuzz.h"

#include "model/snapload.h"
#include "report/report.h"
#include "util/buf.h"
#include "util/jsondoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct jd *doc = jd_parse((const char *)data, size, err, sizeof(err));
    if (!doc)
        return 0;
    struct scan s;
    struct model m;
    if (snapload_build(doc, &s, &m, err, sizeof(err)) == 0) {
        struct buf out;
        buf_init(&out);
        report_json(&out, &m);
        buf_reset(&out);
        report_text(&out, &m, false);
        buf_reset(&out);
        report_prometheus(&out, &m);
        buf_free(&out);
    }
    model_free(&m);
    scan_free(&s);
    jd_free(doc);
    return 0;
}
