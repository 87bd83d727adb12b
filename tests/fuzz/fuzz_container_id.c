/* The cgroup-path parser that says which container a process is in: the
 * input as the whole of /proc/PID/cgroup and as one path. Whatever it
 * answers must be one of the forms it knows. */
#include "fuzz.h"

#include "util/container_id.h"

static bool all_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static void check(bool found, const struct container_id *c)
{
    size_t idn = strnlen(c->id, sizeof(c->id)), uidn = strnlen(c->pod_uid, sizeof(c->pod_uid));
    bool ok = idn < sizeof(c->id) && uidn < sizeof(c->pod_uid);
    if (!found) {
        ok = ok && c->runtime == RUNTIME_NONE && idn == 0 && uidn == 0;
    } else {
        ok = ok && container_runtime_name(c->runtime) && idn > 0;
        if (c->runtime != RUNTIME_LXC && c->runtime != RUNTIME_NSPAWN)
            ok = ok && idn == CONTAINER_ID_HEX && all_hex(c->id, idn);
        ok = ok && (uidn == 0 || uidn == 32 || uidn == 36);
        for (size_t i = 0; ok && i < uidn; i++)
            ok = c->pod_uid[i] == '-' ? uidn == 36 : all_hex(c->pod_uid + i, 1);
    }
    if (!ok) {
        fprintf(stderr, "impossible answer: found %d runtime %d id '%s' pod '%s'\n", found,
                c->runtime, c->id, c->pod_uid);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct container_id c;
    check(container_id_parse(text, &c), &c);
    check(container_id_from_path(text, &c), &c);
    free(text);
    return 0;
}
