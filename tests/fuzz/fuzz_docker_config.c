/* The name extractor of Docker's config.v2.json (and the JSON reader under
 * it), on raw bytes, NULs included; then the kubelet's log names. Whatever
 * it returns is a C string, and once escaped for JSON, one line of valid
 * UTF-8. */
#include "fuzz.h"

#include "collect/containers.h"
#include "util/jsonget.h"

static void check_escaped(const char *s)
{
    if (!s)
        return;
    struct buf b;
    buf_init(&b);
    esc_json(&b, s);
    fuzz_check_utf8_line(buf_steal(&b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name, *host;
    bool valid = containers_docker_config((const char *)data, size, &name, &host);
    if (!valid && (name || host))
        abort();
    check_escaped(name);
    check_escaped(host);
    free(name);
    free(host);

    static const char *const path[] = {"a", "b"};
    char *s;
    for (size_t n = 0; n <= 2; n++) {
        if (jsonget_string((const char *)data, size, path, n, &s))
            check_escaped(s);
        else if (s)
            abort();
        free(s);
    }

    char *text = fuzz_cstr(data, size), *pod, *ns, *ctr;
    if (containers_log_name(text,
                            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                            &pod, &ns, &ctr)) {
        free(pod);
        free(ns);
        free(ctr);
    }
    if (containers_pod_dir(text, "0f5c3b1e-8a2d-4c6f-9b7e-1d3a5c7e9f20", &ns, &pod)) {
        free(pod);
        free(ns);
    }
    free(text);
    return 0;
}
