/* Which container a process is in and what it is called: the cgroup-path
 * parser on every form in tests/fixtures/containers/cgroup, the JSON string
 * reader, and the lookups in the host trees of tests/fixtures/containers
 * (Docker's state, the kubelet's logs, a container's /etc/hostname),
 * hostile files included. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/containers.h"
#include "report/jsonw.h"
#include "util/beneath.h"
#include "util/buf.h"
#include "util/container_id.h"
#include "util/escape.h"
#include "util/fileio.h"
#include "util/jsonget.h"

#define UID "0f5c3b1e-8a2d-4c6f-9b7e-1d3a5c7e9f20"
#define UID2 "a1b2c3d4-0000-4000-8000-00000000beef"
#define STATIC_UID "5d41402abc4b2a76b9719d911017c592"
#define ID_DOCKER_V1 "2a759f8fac4d817ff2bc28c224d51c5030f915c0c14997110517984ca9aa8d0f"
#define ID_DOCKER_V1_SYSTEMD "316c345edd01d735ce5019504a359b5eca8b8319a21fea47b24485de5ba1e60b"
#define ID_DOCKER_V2 "523c835670a5065bb35e0b537f4ab7fffdb6fa0d55b6d72d7b6bb4af0cf13045"
#define ID_DOCKER_V2_SYSTEMD "46a7aededd16ac989dcfbe3d64044c308fae072f0f5f6fa8438d06b658da7bde"
#define ID_K8S "17c132990e8e8523ccd403287b6ae761c1cd57f764df278bce7ed310bbddd7f1"
#define ID_CRIO "c64064614423cb790e88b3e5492ff5ccf673b25ae823089f7a60c65cda24d809"
#define ID_PODMAN "2f259bab93aaaaa2542ba43ef33eb990d0999ee1b9924b557b7be53c0b7a1bb9"
#define ID_CRIDOCKERD "2a036c6226d5b595573b9ab94b96392ddbc9ad1a16f187f08236623647a64493"
#define ID_PARENT "e47125968b3b71049fbc4802d1e40a71ea1359decfabacf70b34588037d4ff0c"
#define ID_HOSTILE "0deac0a26c0d846d7869c23130c6346c4040904a4134bb2f40a8c206a03748ed"
#define ID_OUTER "560e3e12b1e0dafa161e62fb3327ad65c98b7cd53849b17c627e8d3e1d419d6a"
#define ID_CTRD_STATE "d59b64a53e5f089f81447c78ce639b651a559e038d3d1a89a99a53ca464d330e"
#define ID_MOBY "10737a22f3991016430dffc984b79abd52afb7e3857aef3ec61ddf46d7e5bb5e"
#define ID_NERDCTL "aa470170773aae4a69e6e0a509eb8c1f304140b1fea1a2d55ec93a07a78e497c"
#define ID_CRIO_STATE "d9d7dee8a5cf63138c4e40085368fe06216093855fcdf33522e2d0abf4fee0e9"
#define ID_LABELLED "6cc8d29769c753303da01dff740064094f4f7b1c34a768285c54eb5e1a713e02"
#define ID_UNKNOWN "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
#define ID_MULTI "b1e1c1fb6f8241ecaf51de5839e12ac6a83e8c86786ad9d4e71dd8d99ba4d30c"

/* The name and hostname of the hostile config: escapes decoded into control
 * bytes, a lone surrogate as U+FFFD, raw invalid UTF-8 kept. */
#define HOSTILE_NAME "\x1b[31mred\nline\xef\xbf\xbd \xff\xfe end"
#define HOSTILE_HOST "host\x1b]0;owned\x07"

static int open_dir(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/containers/%s", fixtures_dir(), rel);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    return fd;
}

/* --- The cgroup-path parser ---------------------------------------------- */

struct form {
    const char *file;
    enum container_runtime runtime;
    const char *id;
    const char *pod_uid;
};

static const struct form forms[] = {
    {"docker-v1-cgroupfs", RUNTIME_DOCKER, ID_DOCKER_V1, ""},
    {"docker-v1-systemd", RUNTIME_DOCKER, ID_DOCKER_V1_SYSTEMD, ""},
    {"docker-v2-cgroupfs", RUNTIME_DOCKER, ID_DOCKER_V2, ""},
    {"docker-v2-systemd", RUNTIME_DOCKER, ID_DOCKER_V2_SYSTEMD, ""},
    {"containerd-v1-cgroupfs-besteffort", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v1-cgroupfs-guaranteed", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v1-systemd-burstable", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v2-systemd-besteffort", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v2-systemd-guaranteed", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v2-cgroupfs-burstable", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v2-static-pod", RUNTIME_CONTAINERD, ID_K8S, STATIC_UID},
    /* The kubelet's --cgroup-root (kind's "/kubelet"), both drivers. */
    {"containerd-v2-cgroup-root-systemd", RUNTIME_CONTAINERD, ID_K8S, UID},
    {"containerd-v2-cgroup-root-cgroupfs", RUNTIME_CONTAINERD, ID_K8S, UID},
    /* A kind node seen from its host: the node is the host's container. */
    {"kind-node-on-docker", RUNTIME_DOCKER, ID_OUTER, ""},
    {"crio-v2-systemd", RUNTIME_CRIO, ID_CRIO, UID},
    {"crio-v1-cgroupfs", RUNTIME_CRIO, ID_CRIO, UID},
    {"crio-conmon", RUNTIME_NONE, "", ""},
    {"podman-v2-systemd", RUNTIME_PODMAN, ID_PODMAN, ""},
    {"podman-v2-rootless", RUNTIME_PODMAN, ID_PODMAN, ""},
    {"podman-v1-cgroupfs", RUNTIME_PODMAN, ID_PODMAN, ""},
    {"podman-conmon", RUNTIME_NONE, "", ""},
    {"cridockerd-v2-systemd", RUNTIME_DOCKER, ID_CRIDOCKERD, UID},
    /* The path's shape says containerd; Docker's state says otherwise (below). */
    {"docker-cgroup-parent", RUNTIME_CONTAINERD, ID_PARENT, UID},
    {"docker-in-docker", RUNTIME_DOCKER, ID_OUTER, ""},
    {"hybrid-memory-wins", RUNTIME_DOCKER, ID_HOSTILE, ""},
    {"lxc-v1", RUNTIME_LXC, "web01", ""},
    {"lxc-payload-dir", RUNTIME_LXC, "web01", ""},
    {"lxc-v2", RUNTIME_LXC, "web01", ""},
    {"lxc-monitor", RUNTIME_NONE, "", ""},
    {"nspawn-v2", RUNTIME_NSPAWN, "deb-train", ""},
    {"nspawn-supervisor", RUNTIME_NONE, "", ""},
    {"libvirt-qemu", RUNTIME_NONE, "", ""},
    {"host-v2-session", RUNTIME_NONE, "", ""},
    {"host-v1-service", RUNTIME_NONE, "", ""},
    {"namespaced", RUNTIME_NONE, "", ""},
    {"malformed-short-id", RUNTIME_NONE, "", ""},
    {"malformed-upper-id", RUNTIME_NONE, "", ""},
    {"malformed-bad-uid", RUNTIME_NONE, "", ""},
    {"malformed-no-scope", RUNTIME_NONE, "", ""},
    {"malformed-garbage", RUNTIME_NONE, "", ""},
    {"empty", RUNTIME_NONE, "", ""},
    /* A user's claims below its own user@UID.service (looked up: none). */
    {"impostor-docker-user", RUNTIME_DOCKER, ID_DOCKER_V2, ""},
    {"impostor-kube-user", RUNTIME_CONTAINERD, ID_K8S, UID},
};

static void test_cgroup_forms(void **state)
{
    (void)state;
    int dir = open_dir("cgroup");
    struct buf text;
    buf_init(&text);
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        const struct form *f = &forms[i];
        assert_int_equal(read_file_at(dir, f->file, &text, READ_SMALL_MAX), 0);
        struct container_id cid;
        memset(&cid, 0x55, sizeof(cid)); /* whatever was there is overwritten */
        bool found = container_id_parse(text.data, &cid);
        if (found != (f->runtime != RUNTIME_NONE) || cid.runtime != f->runtime ||
            strcmp(cid.id, f->id) != 0 || strcmp(cid.pod_uid, f->pod_uid) != 0)
            fail_msg("%s: got runtime %d id '%s' pod '%s'", f->file, cid.runtime, cid.id,
                     cid.pod_uid);
    }
    buf_free(&text);
    close(dir);
}

static void expect_path(const char *path, enum container_runtime r, const char *id)
{
    struct container_id cid;
    bool found = container_id_from_path(path, &cid);
    if (found != (r != RUNTIME_NONE) || cid.runtime != r || strcmp(cid.id, id) != 0)
        fail_msg("%s: got runtime %d id '%s'", path, cid.runtime, cid.id);
}

static void test_path_edges(void **state)
{
    (void)state;
    expect_path("", RUNTIME_NONE, "");
    expect_path("/", RUNTIME_NONE, "");
    expect_path("//docker//" ID_DOCKER_V2 "/", RUNTIME_DOCKER, ID_DOCKER_V2);
    expect_path("/docker", RUNTIME_NONE, "");
    expect_path("/docker/" ID_DOCKER_V2 "0", RUNTIME_NONE, "");
    /* A bare id only right below a pod, not anywhere. */
    expect_path("/jobs/" ID_K8S, RUNTIME_NONE, "");
    expect_path("/kubepods/pod" UID "/x/" ID_K8S, RUNTIME_NONE, "");
    expect_path("/kubepods/pod" UID, RUNTIME_NONE, "");
    expect_path("/pod" UID "/" ID_K8S, RUNTIME_NONE, ""); /* not below kubepods */
    expect_path("/kubepods-besteffortx.slice/kubepods-pod" UID "/" ID_K8S, RUNTIME_NONE, "");
    expect_path("/kubepodsx.slice/x-pod" UID "/" ID_K8S, RUNTIME_NONE, "");
    expect_path("/kubepods.slice/kubepods-pod" UID ".slice/" ID_K8S, RUNTIME_NONE, "");
    expect_path("/system.slice/docker-" ID_DOCKER_V2 ".scope/init", RUNTIME_DOCKER, ID_DOCKER_V2);
    expect_path("/system.slice/nerdctl-" ID_K8S ".scope", RUNTIME_CONTAINERD, ID_K8S);
    expect_path("/crio-" ID_CRIO ".scope.scope", RUNTIME_NONE, "");
    expect_path("/lxc.payload.", RUNTIME_NONE, "");
    expect_path("/lxc", RUNTIME_NONE, "");
    expect_path("/machine.slice/machine-.scope", RUNTIME_NONE, "");
    expect_path("/machine.slice/machine-a\\x2.scope", RUNTIME_NSPAWN, "a\\x2");
    expect_path("/machine.slice/machine-a\\x00b.scope", RUNTIME_NONE, "");
    expect_path("/machine.slice/machine-\\x1b\\x5b.scope", RUNTIME_NSPAWN, "\x1b[");
    struct container_id k;
    assert_true(container_id_from_path("/kubepods.slice/kubepods-burstable.slice/"
                                       "kubepods-pod0f5c3b1e_8a2d_4c6f_9b7e_1d3a5c7e9f20.slice/"
                                       "crio-" ID_CRIO,
                                       &k));
    assert_string_equal(k.pod_uid, UID);

    /* A name longer than the room for it is no answer, not a cut one. */
    char longname[600] = "/lxc.payload.";
    memset(longname + strlen(longname), 'n', 400);
    expect_path(longname, RUNTIME_NONE, "");

    /* The memory line of v1 wins over the v2 line; either alone works. */
    struct container_id cid;
    assert_true(container_id_parse(
        "5:memory:/docker/" ID_DOCKER_V1 "\n0::/docker/" ID_DOCKER_V2 "\n", &cid));
    assert_string_equal(cid.id, ID_DOCKER_V1);
    assert_true(container_id_parse("5:memory:/\n0::/docker/" ID_DOCKER_V2, &cid));
    assert_string_equal(cid.id, ID_DOCKER_V2);
    assert_true(container_id_parse("7:cpu,memory,pids:/lxc/a", &cid));
    assert_string_equal(cid.id, "a");
    assert_false(container_id_parse("5:memoryx:/docker/" ID_DOCKER_V2, &cid));
    assert_false(container_id_parse("1::/docker/" ID_DOCKER_V2, &cid));
    assert_int_equal(cid.runtime, RUNTIME_NONE);

    assert_string_equal(container_runtime_name(RUNTIME_DOCKER), "docker");
    assert_string_equal(container_runtime_name(RUNTIME_CONTAINERD), "containerd");
    assert_string_equal(container_runtime_name(RUNTIME_CRIO), "crio");
    assert_string_equal(container_runtime_name(RUNTIME_PODMAN), "podman");
    assert_string_equal(container_runtime_name(RUNTIME_LXC), "lxc");
    assert_string_equal(container_runtime_name(RUNTIME_NSPAWN), "nspawn");
    assert_null(container_runtime_name(RUNTIME_NONE));
}

/* --- The JSON string reader ---------------------------------------------- */

static char *get(const char *json, const char *k1, const char *k2)
{
    const char *path[] = {k1, k2};
    char *out = (char *)"unset";
    bool ok = jsonget_string(json, strlen(json), path, k2 ? 2 : 1, &out);
    if (!ok)
        assert_null(out);
    return out;
}

static void expect_get(const char *json, const char *k1, const char *k2, const char *want)
{
    char *got = get(json, k1, k2);
    if (!want ? got != NULL : !got || strcmp(got, want) != 0)
        fail_msg("%s: wanted %s, got %s", json, want ? want : "nothing", got ? got : "nothing");
    free(got);
}

static void test_jsonget(void **state)
{
    (void)state;
    expect_get("{\"a\":\"x\"}", "a", NULL, "x");
    expect_get(" {\"b\":1, \"a\" : \"x\" } \n", "a", NULL, "x");
    expect_get("{\"o\":{\"a\":\"in\"},\"a\":\"top\"}", "a", NULL, "top");
    expect_get("{\"o\":{\"a\":\"in\"}}", "a", NULL, NULL);
    expect_get("{\"o\":{\"a\":\"in\"}}", "o", "a", "in");
    expect_get("{\"o\":[{\"a\":\"in\"}]}", "o", "a", NULL);
    expect_get("{\"a\":\"first\",\"a\":\"last\"}", "a", NULL, "last");
    expect_get("{\"a\":\"first\",\"a\":null}", "a", NULL, NULL);
    expect_get("{\"a\":null}", "a", NULL, NULL);
    expect_get("{\"a\":{\"b\":\"x\"}}", "a", NULL, NULL);
    expect_get("{\"a\":\"\"}", "a", NULL, "");
    expect_get("{\"N\\u0061me\":\"escaped key\"}", "Name", NULL, "escaped key");
    expect_get("{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "a", NULL, "\"\\/\b\f\n\r\t");
    expect_get("{\"a\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}", "a", NULL,
               "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    expect_get("{\"a\":\"\\udc00\\ud800x\\ud800\\u0041\"}", "a", NULL,
               "\xef\xbf\xbd\xef\xbf\xbdx\xef\xbf\xbd"
               "A");
    expect_get("{\"a\":\"raw \xff\xfe bytes\"}", "a", NULL, "raw \xff\xfe bytes");
    expect_get("{\"n\":[1,-0.5e+3,0,1E9,true,false,null,{},[]],\"a\":\"x\"}", "a", NULL, "x");
    /* Malformed anywhere: no answer, even with the key found before it. */
    static const char *const bad[] = {
        "",
        "{",
        "{\"a\":\"x\"",
        "{\"a\":\"x\"}}",
        "{\"a\":\"x\"} x",
        "{\"a\":\"x\",}",
        "{\"a\":\"x\" \"b\":1}",
        "{\"a\":\"x\",\"b\":01}",
        "{\"a\":\"x\",\"b\":1.}",
        "{\"a\":\"x\",\"b\":-}",
        "{\"a\":\"x\",\"b\":tru}",
        "{\"a\":\"x\",\"b\":[1,]}",
        "{\"a\":\"new\nline\"}",
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u12\"}",
        "{\"a\":\"nul\\u0000inside\"}",
        "{a:\"x\"}",
        "{\"a\":'x'}",
        "[\"a\",\"x\"]",
        "{\"a\":\"x\",\"b\":\"\\ud800\\u12\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_get(bad[i], "a", NULL, NULL);
    /* A NUL byte in the text is malformed, not the end. */
    static const char nul[] = "{\"a\":\"x\"}\0junk";
    const char *path[] = {"a"};
    char *out;
    assert_false(jsonget_string(nul, sizeof(nul) - 1, path, 1, &out));
    assert_null(out);

    /* Nesting: JSONDOC_MAX_DEPTH levels are fine, one more is not. */
    struct buf deep;
    buf_init(&deep);
    buf_adds(&deep, "{\"a\":\"x\",\"d\":");
    for (int i = 1; i < JSONDOC_MAX_DEPTH; i++)
        buf_adds(&deep, "[");
    for (int i = 1; i < JSONDOC_MAX_DEPTH; i++)
        buf_adds(&deep, "]");
    buf_adds(&deep, "}");
    expect_get(deep.data, "a", NULL, "x");
    buf_reset(&deep);
    buf_adds(&deep, "{\"a\":\"x\",\"d\":");
    for (int i = 0; i < 100000; i++) /* deep enough to overflow a naive reader's stack */
        buf_adds(&deep, "[");
    buf_adds(&deep, "}");
    expect_get(deep.data, "a", NULL, NULL);
    buf_free(&deep);
}

/* --- Docker's config.v2.json --------------------------------------------- */

static void docker_config(const char *id, char **name, char **host, bool *valid)
{
    int root = open_dir("host/var/lib/docker/containers");
    char path[256];
    snprintf(path, sizeof(path), "%s/config.v2.json", id);
    struct buf text;
    buf_init(&text);
    assert_int_equal(read_beneath(root, path, &text, CONTAINERS_JSON_MAX), 0);
    *valid = containers_docker_config(text.data, text.len, name, host);
    buf_free(&text);
    close(root);
}

static void test_docker_config(void **state)
{
    (void)state;
    char *name, *host;
    bool valid;
    /* The top-level Name, not the volume's or the label's of the same key. */
    docker_config(ID_DOCKER_V2, &name, &host, &valid);
    assert_true(valid);
    assert_string_equal(name, "trainer");
    assert_string_equal(host, "523c835670a5");
    free(name);
    free(host);

    docker_config(ID_DOCKER_V2_SYSTEMD, &name, &host, &valid);
    assert_true(valid);
    assert_null(name);
    assert_string_equal(host, "noname-host");
    free(host);

    docker_config(ID_DOCKER_V1, &name, &host, &valid); /* truncated */
    assert_false(valid);
    assert_null(name);
    assert_null(host);

    docker_config(ID_HOSTILE, &name, &host, &valid);
    assert_true(valid);
    assert_string_equal(name, HOSTILE_NAME);
    assert_string_equal(host, HOSTILE_HOST);
    free(name);
    free(host);

    /* A Name of "/" or "" is no name. */
    assert_true(containers_docker_config("{\"Name\":\"/\"}", 12, &name, &host));
    assert_null(name);
    assert_null(host);
}

/* --- Lookups in the host tree -------------------------------------------- */

struct tree {
    int host, ctr;
};

static int setup_tree(void **state)
{
    struct tree *t = malloc(sizeof(*t));
    t->host = open_dir("host");
    t->ctr = open_dir("ctr");
    *state = t;
    return 0;
}

static int teardown_tree(void **state)
{
    struct tree *t = *state;
    close(t->host);
    close(t->ctr);
    free(t);
    return 0;
}

/* Looks up the container of the cgroup fixture file. */
static void lookup_form(const struct tree *t, const char *file, int ctr, struct container_info *ci)
{
    int dir = open_dir("cgroup");
    struct buf text;
    buf_init(&text);
    assert_int_equal(read_file_at(dir, file, &text, READ_SMALL_MAX), 0);
    struct container_id cid;
    assert_true(container_id_parse(text.data, &cid));
    assert_int_equal(containers_lookup(t->host, &cid, ctr, ci), 0);
    buf_free(&text);
    close(dir);
}

static void lookup_id(const struct tree *t, enum container_runtime r, const char *id,
                      const char *pod_uid, struct container_info *ci)
{
    struct container_id cid = {.runtime = r};
    snprintf(cid.id, sizeof(cid.id), "%s", id);
    snprintf(cid.pod_uid, sizeof(cid.pod_uid), "%s", pod_uid ? pod_uid : "");
    assert_int_equal(containers_lookup(t->host, &cid, -1, ci), 0);
}

#define assert_str_or_null(got, want)                                                              \
    do {                                                                                           \
        if ((want) == NULL)                                                                        \
            assert_null(got);                                                                      \
        else                                                                                       \
            assert_string_equal((got) ? (got) : "(null)", (want) ? (want) : "");                   \
    } while (0)

static void expect_info(const struct container_info *ci, enum container_runtime r, const char *id,
                        const char *name, const char *pod_uid, const char *pod, const char *ns,
                        const char *host)
{
    assert_int_equal(ci->runtime, r);
    assert_str_or_null(ci->id, id);
    assert_str_or_null(ci->name, name);
    assert_str_or_null(ci->pod_uid, pod_uid);
    assert_str_or_null(ci->pod, pod);
    assert_str_or_null(ci->namespace, ns);
    assert_str_or_null(ci->hostname, host);
}

static void test_lookup_docker(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    /* Config.Hostname wins over the container's own /etc/hostname. */
    lookup_form(t, "docker-v2-cgroupfs", t->ctr, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V2, "trainer", NULL, NULL, NULL, "523c835670a5");
    containers_free(&ci);
    assert_null(ci.id);

    lookup_form(t, "docker-v2-systemd", -1, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V2_SYSTEMD, NULL, NULL, NULL, NULL, "noname-host");
    containers_free(&ci);

    /* Malformed: nothing from it, the container's hostname instead. */
    lookup_form(t, "docker-v1-cgroupfs", t->ctr, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V1, NULL, NULL, NULL, NULL, "trainer-0");
    containers_free(&ci);

    /* config.v2.json -> /etc/shadow: not followed (the tree's etc/shadow
     * would read as the name "shadow"), so no name and no hostname. */
    lookup_form(t, "docker-v1-systemd", -1, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V1_SYSTEMD, NULL, NULL, NULL, NULL, NULL);
    containers_free(&ci);

    lookup_form(t, "hybrid-memory-wins", -1, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_HOSTILE, HOSTILE_NAME, NULL, NULL, NULL, HOSTILE_HOST);
    containers_free(&ci);

    /* cri-dockerd: Docker's name, the pod from the kubelet's logs. */
    lookup_form(t, "cridockerd-v2-systemd", -1, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_CRIDOCKERD, "k8s_train_trainer-0_ml_" UID "_0", UID,
                "trainer-0", "ml", "trainer-0");
    containers_free(&ci);

    /* --cgroup-parent under kubepods: shaped like containerd, Docker's state
     * says it is Docker's; the pod's logs still name the pod. */
    lookup_form(t, "docker-cgroup-parent", -1, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_PARENT, "parented", UID, "trainer-0", "ml", "e47125968b3b");
    containers_free(&ci);

    lookup_form(t, "docker-in-docker", -1, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_OUTER, "dind", NULL, NULL, NULL, "dind");
    containers_free(&ci);

    /* Docker's data-root from daemon.json. */
    int other = open_dir("host-dataroot");
    struct container_id cid = {.runtime = RUNTIME_DOCKER, .id = ID_DOCKER_V2};
    assert_int_equal(containers_lookup(other, &cid, -1, &ci), 0);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V2, "relocated", NULL, NULL, NULL, "relocated");
    containers_free(&ci);
    close(other);
}

/* A cgroup below a user's own systemd manager is named by that user: a
 * real container's id there (any user can read it in /proc/PID/cgroup)
 * must not lend the user's container that container's name, pod or
 * namespace; only its own hostname names it. The same ids at the
 * runtimes' paths still are. */
static void test_lookup_user_delegated(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    struct container_id cid;
    assert_true(container_id_from_path("/user.slice/user-1000.slice/user@1000.service/"
                                       "app.slice/docker-" ID_DOCKER_V2 ".scope", &cid));
    assert_true(cid.user_delegated);
    assert_true(container_id_from_path("/system.slice/docker-" ID_DOCKER_V2 ".scope", &cid));
    assert_false(cid.user_delegated);
    assert_true(container_id_from_path("/user.slice/user@x.service/docker-" ID_DOCKER_V2 ".scope",
                                       &cid));
    assert_false(cid.user_delegated);

    lookup_form(t, "impostor-docker-user", t->ctr, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V2, NULL, NULL, NULL, NULL, "trainer-0");
    containers_free(&ci);
    lookup_form(t, "impostor-kube-user", -1, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_K8S, NULL, UID, NULL, NULL, NULL);
    containers_free(&ci);

    lookup_form(t, "docker-v2-cgroupfs", t->ctr, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_DOCKER_V2, "trainer", NULL, NULL, NULL, "523c835670a5");
    containers_free(&ci);
    lookup_form(t, "containerd-v2-systemd-besteffort", t->ctr, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_K8S, "train", UID, "trainer-0", "ml", "trainer-0");
    containers_free(&ci);
}

static void test_lookup_kube(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    /* From the id: /var/log/containers; the hostname: the pod's name. */
    lookup_form(t, "containerd-v2-systemd-besteffort", t->ctr, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_K8S, "train", UID, "trainer-0", "ml", "trainer-0");
    containers_free(&ci);

    lookup_form(t, "containerd-v1-cgroupfs-guaranteed", -1, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_K8S, "train", UID, "trainer-0", "ml", NULL);
    containers_free(&ci);

    /* No /var/log/containers entry: the pod's only container directory. */
    lookup_form(t, "crio-v2-systemd", -1, &ci);
    expect_info(&ci, RUNTIME_CRIO, ID_CRIO, "train", UID, "trainer-0", "ml", NULL);
    containers_free(&ci);

    lookup_form(t, "containerd-v2-static-pod", -1, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_K8S, "train", STATIC_UID, "trainer-0", "ml", NULL);
    containers_free(&ci);
    lookup_id(t, RUNTIME_CONTAINERD, ID_CRIO, STATIC_UID, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_CRIO, "etcd", STATIC_UID, "etcd-node1", "kube-system",
                NULL);
    containers_free(&ci);

    /* Two containers in the pod: which one is not guessed. */
    lookup_id(t, RUNTIME_CONTAINERD, ID_CRIO, UID2, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_CRIO, NULL, UID2, "multi-0", "ml", NULL);
    containers_free(&ci);
    lookup_id(t, RUNTIME_CONTAINERD, ID_MULTI, UID2, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_MULTI, "train", UID2, "multi-0", "ml", NULL);
    containers_free(&ci);

    /* Unknown everywhere: the id and nothing else. */
    lookup_id(t, RUNTIME_PODMAN, ID_UNKNOWN, NULL, &ci);
    expect_info(&ci, RUNTIME_PODMAN, ID_UNKNOWN, NULL, NULL, NULL, NULL, NULL);
    containers_free(&ci);
    lookup_id(t, RUNTIME_CONTAINERD, ID_UNKNOWN, "00000000-0000-0000-0000-000000000000", &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_UNKNOWN, NULL, "00000000-0000-0000-0000-000000000000",
                NULL, NULL, NULL);
    containers_free(&ci);
}

/* The other runtimes' state: containerd's task bundles (by namespace) and
 * containers/storage's run root, whose OCI specs carry annotations. */
static void test_lookup_state(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    lookup_id(t, RUNTIME_CONTAINERD, ID_CTRD_STATE, UID, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_CTRD_STATE, "loader", UID, "data-7f9c", "etl", NULL);
    containers_free(&ci);

    /* containerd's "moby" namespace is Docker's, whatever the path said. */
    lookup_id(t, RUNTIME_CONTAINERD, ID_MOBY, NULL, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_MOBY, NULL, NULL, NULL, NULL, "c0ffee");
    containers_free(&ci);

    lookup_id(t, RUNTIME_CONTAINERD, ID_NERDCTL, NULL, &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_NERDCTL, "web-1", NULL, NULL, NULL, "web");
    containers_free(&ci);

    /* containers/storage: a pod's container is CRI-O's, else podman's. */
    lookup_id(t, RUNTIME_CONTAINERD, ID_CRIO_STATE, NULL, &ci);
    expect_info(&ci, RUNTIME_CRIO, ID_CRIO_STATE, "sidecar", NULL, "ingest-0", "etl", "ingest-0");
    containers_free(&ci);
    /* podman's name: the graph root's containers.json, its first name. */
    lookup_form(t, "podman-v2-systemd", -1, &ci);
    expect_info(&ci, RUNTIME_PODMAN, ID_PODMAN, "swpod", NULL, NULL, NULL, "2f259bab93aa");
    containers_free(&ci);
    lookup_id(t, RUNTIME_CRIO, ID_PODMAN, NULL, &ci);
    assert_int_equal(ci.runtime, RUNTIME_CRIO); /* the path's word is kept */
    containers_free(&ci);

    /* cri-dockerd's labels in Docker's config: the pod without the logs. */
    lookup_id(t, RUNTIME_CONTAINERD, ID_LABELLED, NULL, &ci);
    expect_info(&ci, RUNTIME_DOCKER, ID_LABELLED,
                "k8s_worker_labelled-0_team_0f5c3b1e-8a2d-4c6f-9b7e-1d3a5c7e9f23_0", NULL,
                "labelled-0", "team", "labelled-0");
    containers_free(&ci);
}

/* containerd's own clients (ctr): a cgroup of the shape only, confirmed by
 * its task bundle directory in any namespace. */
static void lookup_ctrd(const struct tree *t, const char *cgroup, struct container_info *ci)
{
    struct container_id cid;
    assert_false(container_id_parse(cgroup, &cid));
    assert_int_equal(cid.runtime, RUNTIME_NONE);
    assert_int_equal(containers_lookup(t->host, &cid, -1, ci), 0);
}

static void test_lookup_ctrd(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    lookup_ctrd(t, "5:memory:/default/swctr\n0::/default/swctr\n", &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, "swctr", "swctr", NULL, NULL, NULL, NULL);
    assert_string_equal(ci.containerd_namespace, "default");
    containers_free(&ci);
    /* A digest is no name: the CRI annotations name it. */
    lookup_ctrd(t, "0::/k8s.io/" ID_CTRD_STATE "\n", &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_CTRD_STATE, "loader", NULL, "data-7f9c", "etl", NULL);
    assert_string_equal(ci.containerd_namespace, "k8s.io");
    containers_free(&ci);
    /* The systemd scope: the namespace is the part before a '-' that leads
     * to a bundle. */
    lookup_ctrd(t, "0::/system.slice/team-a-job-1.scope\n", &ci);
    expect_info(&ci, RUNTIME_CONTAINERD, "job-1", "job-1", NULL, NULL, NULL, NULL);
    assert_string_equal(ci.containerd_namespace, "team-a");
    containers_free(&ci);
    /* The same shapes without a bundle: no container. */
    const char *none[] = {"0::/system.slice/cron.service\n", "0::/default/other\n",
                          "0::/system.slice/default-other.scope\n",
                          "0::/user.slice/user-1000.slice/session-3.scope\n"};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        lookup_ctrd(t, none[i], &ci);
        expect_info(&ci, RUNTIME_NONE, NULL, NULL, NULL, NULL, NULL, NULL);
        assert_null(ci.containerd_namespace);
    }
}

static void expect_ctrd(const char *path, const char *ns, const char *id)
{
    struct container_id cid;
    assert_false(container_id_from_path(path, &cid));
    if (strcmp(cid.ctrd_ns, ns) != 0 || strcmp(cid.ctrd_id, id) != 0 || cid.runtime != RUNTIME_NONE)
        fail_msg("%s: got candidate '%s' '%s'", path, cid.ctrd_ns, cid.ctrd_id);
}

static void test_ctrd_shapes(void **state)
{
    (void)state;
    expect_ctrd("/default/swctr", "default", "swctr");
    expect_ctrd("/k8s.io/" ID_K8S, "k8s.io", ID_K8S);
    expect_ctrd("/system.slice/default-swctr.scope", "", "default-swctr");
    expect_ctrd("/machine.slice/a.b-c_d.scope", "", "a.b-c_d");
    expect_ctrd("/system.slice/cron.service", "system.slice", "cron.service"); /* a shape only */
    expect_ctrd("/", "", "");
    expect_ctrd("/default", "", "");
    expect_ctrd("/a/b/c", "", "");
    expect_ctrd("/default/bad..id", "", "");
    expect_ctrd("/default/-x", "", "");
    expect_ctrd("/default/x-", "", "");
    expect_ctrd("/de fault/x", "", "");
    expect_ctrd("/system.slice/noseparator.scope", "", "");
    expect_ctrd("/system.scope/a-b.scope", "system.scope", "a-b.scope"); /* not below a slice */
    /* Below a user's own manager, where the user names the scopes. */
    expect_ctrd("/user.slice/user-1000.slice/user@1000.service/app.slice/default-x.scope", "", "");
    char longid[200] = "/default/";
    memset(longid + strlen(longid), 'a', 77);
    expect_ctrd(longid, "", "");
    /* A runtime's form is a container, never a candidate. */
    expect_path("/docker/" ID_DOCKER_V2, RUNTIME_DOCKER, ID_DOCKER_V2);
    struct container_id cid;
    assert_true(container_id_from_path("/lxc/web", &cid));
    assert_string_equal(cid.ctrd_id, "");
    /* Of the whole file: the memory line's candidate, else the v2 line's;
     * a container on either line wins. */
    assert_false(container_id_parse("5:memory:/\n0::/default/swctr\n", &cid));
    assert_string_equal(cid.ctrd_id, "swctr");
    assert_true(container_id_parse("5:memory:/default/swctr\n0::/docker/" ID_DOCKER_V2, &cid));
    assert_string_equal(cid.id, ID_DOCKER_V2);
}

/* One container: the same runtime, id and containerd namespace. A ctr
 * user's id is unique only within its namespace. */
static void test_same(void **state)
{
    (void)state;
    struct container_info probe = {
        .runtime = RUNTIME_CONTAINERD, .id = "web", .containerd_namespace = "probe"};
    struct container_info other = {
        .runtime = RUNTIME_CONTAINERD, .id = "web", .containerd_namespace = "other"};
    struct container_info probe2 = {
        .runtime = RUNTIME_CONTAINERD, .id = "web", .containerd_namespace = "probe"};
    struct container_info bare = {.runtime = RUNTIME_CONTAINERD, .id = "web"};
    struct container_info docker = {.runtime = RUNTIME_DOCKER, .id = ID_DOCKER_V2};
    struct container_info docker2 = {.runtime = RUNTIME_DOCKER, .id = ID_DOCKER_V2};
    struct container_info podman = {.runtime = RUNTIME_PODMAN, .id = ID_DOCKER_V2};
    struct container_info none = {.runtime = RUNTIME_NONE};
    assert_true(containers_same(&probe, &probe2));
    assert_false(containers_same(&probe, &other));
    assert_false(containers_same(&other, &probe));
    assert_false(containers_same(&probe, &bare));
    assert_false(containers_same(&bare, &probe));
    assert_true(containers_same(&bare, &bare));
    assert_true(containers_same(&docker, &docker2));
    assert_false(containers_same(&docker, &podman));
    assert_false(containers_same(&none, &none));
}

/* A container's name for a person: a containerd namespace's is
 * "NAMESPACE/NAME", else "NAMESPACE/" and a full id's first 12 digits;
 * another runtime's is its name, else its id as given. */
static void test_label(void **state)
{
    (void)state;
    const struct {
        const char *ns, *name, *id, *want;
    } cases[] = {
        {"probe", "web", "web", "probe/web"},
        {"other", "web", "web", "other/web"},
        {"probe", NULL, "web", "probe/web"},
        {"probe", "web", NULL, "probe/web"},
        /* a digest (the kubelet's, nerdctl's) is unique on the node */
        {"k8s.io", "bert", ID_DOCKER_V2, "bert"},
        {"k8s.io", NULL, ID_DOCKER_V2, "523c835670a5"},
        {NULL, "web", ID_DOCKER_V2, "web"},
        {NULL, NULL, ID_DOCKER_V2, "523c835670a5"},
        {NULL, NULL, "0123456789ab", "0123456789ab"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *l = container_label(cases[i].ns, cases[i].name, cases[i].id);
        assert_string_equal(l, cases[i].want);
        free(l);
    }
    assert_null(container_label("probe", NULL, NULL));
    assert_null(container_label(NULL, NULL, NULL));
}

static void test_storage_conf(void **state)
{
    (void)state;
    char *g, *r;
    containers_storage_conf("# comment\ndriver = \"x\"\n[storage]\n  driver = \"overlay\"\n"
                            "graphroot = \"/srv/containers\" # moved\n"
                            "runroot='/run/c s'\n[storage.options]\ngraphroot = \"/no\"\n",
                            &g, &r);
    assert_string_equal(g, "/srv/containers");
    assert_string_equal(r, "/run/c s");
    free(g);
    free(r);
    /* Outside [storage], escaped, relative, unterminated or trailed: no answer. */
    const char *bad[] = {"graphroot = \"/a\"\n", "[storage]\ngraphroot = \"/a\\\\b\"\n",
                         "[storage]\ngraphroot = \"a\"\n", "[storage]\ngraphroot = \"/a\n",
                         "[storage]\ngraphroot = \"/a\" x\n", "[storage]\ngraphroot = /a\n",
                         "[storage]\ngraphroot = \"\"\n", "[storagex]\ngraphroot = \"/a\"\n",
                         ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        containers_storage_conf(bad[i], &g, &r);
        if (g || r)
            fail_msg("%s: got %s %s", bad[i], g ? g : "-", r ? r : "-");
    }
}

static void test_jsonget_where(void **state)
{
    (void)state;
    static const char *const names[] = {"names", JSONGET_FIRST};
    const char *doc = "[{\"id\":\"a\",\"names\":[\"x\"]}, {\"names\":[\"y\",\"z\"],\"id\":\"b\"},"
                      "{\"id\":7}]";
    char *out;
    assert_true(jsonget_string_where(doc, strlen(doc), "id", "b", names, 2, &out));
    assert_string_equal(out, "y");
    free(out);
    assert_true(jsonget_string_where(doc, strlen(doc), "id", "a", names, 2, &out));
    assert_string_equal(out, "x");
    free(out);
    assert_false(jsonget_string_where(doc, strlen(doc), "id", "c", names, 2, &out));
    assert_null(out);
    const char *bad[] = {"", "[]", "{}", "[{\"id\":\"a\",\"names\":[]}]",
                         "[{\"id\":\"a\",\"names\":[\"x\"]},]",
                         "[{\"id\":\"a\",\"names\":[\"x\"]}] x",
                         "[{\"id\":\"a\",\"names\":[\"x\"]}, 3]",
                         "[{\"id\":\"a\",\"names\":{\"[0]\":\"x\"}}]",
                         "[{\"id\":\"a\",\"names\":[\"x\"]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (jsonget_string_where(bad[i], strlen(bad[i]), "id", "a", names, 2, &out))
            fail_msg("%s: got %s", bad[i], out);
    /* The first element of an array also on an object's path. */
    static const char *const first[] = {"a", JSONGET_FIRST};
    const char *arr = "{\"a\":[\"p\",\"q\"]}";
    assert_true(jsonget_string(arr, strlen(arr), first, 2, &out));
    assert_string_equal(out, "p");
    free(out);
}

static void test_lookup_named(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    lookup_form(t, "lxc-v2", t->ctr, &ci);
    expect_info(&ci, RUNTIME_LXC, "web01", "web01", NULL, NULL, NULL, "trainer-0");
    containers_free(&ci);
    lookup_form(t, "nspawn-v2", -1, &ci);
    expect_info(&ci, RUNTIME_NSPAWN, "deb-train", "deb-train", NULL, NULL, NULL, NULL);
    containers_free(&ci);

    /* Not in a container: nothing is looked up. */
    struct container_id none = {.runtime = RUNTIME_NONE};
    assert_int_equal(containers_lookup(t->host, &none, t->ctr, &ci), 0);
    expect_info(&ci, RUNTIME_NONE, NULL, NULL, NULL, NULL, NULL, NULL);

    char *host = containers_hostname(t->ctr);
    assert_string_equal(host, "trainer-0");
    free(host);

    /* The container's /etc/hostname as a link: not followed. */
    int link = open_dir("ctr-link");
    struct container_id cid = {.runtime = RUNTIME_PODMAN, .id = ID_UNKNOWN};
    assert_int_equal(containers_lookup(t->host, &cid, link, &ci), 0);
    assert_null(ci.hostname);
    containers_free(&ci);
    assert_null(containers_hostname(link));
    close(link);
}

static void test_kube_names(void **state)
{
    (void)state;
    char *a, *b, *c;
    assert_true(containers_pod_dir("ml_trainer-0_" UID, UID, &a, &b));
    assert_string_equal(a, "ml");
    assert_string_equal(b, "trainer-0");
    free(a);
    free(b);
    assert_false(containers_pod_dir("ml_trainer-0_" UID, UID2, &a, &b));
    assert_false(containers_pod_dir("a_b_c_" UID, UID, &a, &b));
    assert_false(containers_pod_dir("_b_" UID, UID, &a, &b));
    assert_false(containers_pod_dir(UID, UID, &a, &b));
    assert_false(containers_pod_dir("", UID, &a, &b));

    assert_true(containers_log_name("p_n_c-" ID_K8S ".log", ID_K8S, &a, &b, &c));
    assert_string_equal(a, "p");
    assert_string_equal(b, "n");
    assert_string_equal(c, "c");
    free(a);
    free(b);
    free(c);
    assert_false(containers_log_name("p_n_c-" ID_K8S ".log", ID_CRIO, &a, &b, &c));
    assert_false(containers_log_name("p_n_c_" ID_K8S ".log", ID_K8S, &a, &b, &c));
    assert_false(containers_log_name("p_n-" ID_K8S ".log", ID_K8S, &a, &b, &c));
    assert_false(containers_log_name("p_n_-" ID_K8S ".log", ID_K8S, &a, &b, &c));
    assert_false(containers_log_name("-" ID_K8S ".log", ID_K8S, &a, &b, &c));
    assert_false(containers_log_name(ID_K8S ".log", ID_K8S, &a, &b, &c));
    assert_false(containers_log_name("p_n_c-" ID_K8S ".lo", ID_K8S, &a, &b, &c));
    assert_false(containers_log_name("x.log", "", &a, &b, &c));
}

/* --- Hostile trees made at run time -------------------------------------- */

struct scratch {
    char dir[64];
    int host;
};

static void put(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void mkdirs(const char *base, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", base, rel);
    for (char *p = path + strlen(base) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
        *p = '/';
    }
    assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static int setup_scratch(void **state)
{
    struct scratch *s = calloc(1, sizeof(*s));
    snprintf(s->dir, sizeof(s->dir), "/tmp/shmwatch-containers-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    mkdirs(s->dir, "host/var/lib/docker/containers");
    mkdirs(s->dir, "outside/" ID_K8S);
    char path[4096];
    snprintf(path, sizeof(path), "%s/host", s->dir);
    s->host = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(s->host >= 0);
    *state = s;
    return 0;
}

static int teardown_scratch(void **state)
{
    struct scratch *s = *state;
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
    close(s->host);
    int rc = system(cmd);
    free(s);
    return rc == 0 ? 0 : -1;
}

/* A valid config.v2.json of n bytes or a little more, named name. */
static void big_config(struct buf *b, size_t n, const char *name)
{
    buf_reset(b);
    buf_printf(b, "{\"Name\":\"/%s\",\"Pad\":\"", name);
    while (b->len + 2 < n)
        buf_addc(b, 'x');
    buf_adds(b, "\"}");
}

static char *docker_name(int host, const char *id)
{
    struct container_id cid = {.runtime = RUNTIME_DOCKER};
    snprintf(cid.id, sizeof(cid.id), "%s", id);
    struct container_info ci;
    assert_int_equal(containers_lookup(host, &cid, -1, &ci), 0);
    char *name = ci.name;
    ci.name = NULL;
    containers_free(&ci);
    return name;
}

static void test_hostile_files(void **state)
{
    struct scratch *s = *state;
    char path[4096];
    struct buf b;
    buf_init(&b);

    /* At the cap a config is read; one byte more and it is not. */
    mkdirs(s->dir, "host/var/lib/docker/containers/" ID_K8S);
    snprintf(path, sizeof(path), "%s/host/var/lib/docker/containers/" ID_K8S "/config.v2.json",
             s->dir);
    big_config(&b, CONTAINERS_JSON_MAX, "big");
    assert_int_equal(b.len, CONTAINERS_JSON_MAX);
    put(path, b.data, b.len);
    char *name = docker_name(s->host, ID_K8S);
    assert_string_equal(name, "big");
    free(name);
    big_config(&b, CONTAINERS_JSON_MAX + 1, "huge");
    put(path, b.data, b.len);
    assert_null(docker_name(s->host, ID_K8S));

    /* A FIFO is not waited on, a directory not read. */
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_null(docker_name(s->host, ID_K8S));
    unlink(path);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_null(docker_name(s->host, ID_K8S));
    rmdir(path);

    /* The container's directory as links out of the root: absolute and
     * climbing. Each would find a config named "escaped". */
    snprintf(path, sizeof(path), "%s/outside/" ID_K8S "/config.v2.json", s->dir);
    put(path, "{\"Name\":\"/escaped\"}", 19);
    char target[4096];
    snprintf(target, sizeof(target), "%s/outside/" ID_K8S, s->dir);
    snprintf(path, sizeof(path), "%s/host/var/lib/docker/containers/" ID_K8S, s->dir);
    rmdir(path);
    assert_int_equal(symlink(target, path), 0);
    assert_null(docker_name(s->host, ID_K8S));
    unlink(path);
    assert_int_equal(symlink("../../../../../outside/" ID_K8S, path), 0);
    assert_null(docker_name(s->host, ID_K8S));
    /* /var/lib/docker itself a link out of the root. */
    unlink(path);
    snprintf(target, sizeof(target), "%s/outside", s->dir);
    snprintf(path, sizeof(path), "%s/host/var/lib/docker/containers", s->dir);
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(symlink(target, path), 0);
    assert_null(docker_name(s->host, ID_K8S));

    /* A container's hostname file of 4 KiB and more is no hostname. */
    mkdirs(s->dir, "ctr/etc");
    snprintf(path, sizeof(path), "%s/ctr/etc/hostname", s->dir);
    buf_reset(&b);
    while (b.len <= CONTAINERS_HOSTNAME_MAX)
        buf_adds(&b, "h");
    put(path, b.data, b.len);
    snprintf(path, sizeof(path), "%s/ctr", s->dir);
    int ctr = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct container_id cid = {.runtime = RUNTIME_PODMAN, .id = ID_PODMAN};
    struct container_info ci;
    assert_int_equal(containers_lookup(s->host, &cid, ctr, &ci), 0);
    assert_null(ci.hostname);
    containers_free(&ci);
    close(ctr);
    buf_free(&b);
}

/* Inside the root, open_beneath follows links (RESOLVE_IN_ROOT: an absolute
 * one means the root's path); the fallback follows none; neither climbs out. */
static void test_open_beneath(void **state)
{
    struct scratch *s = *state;
    char path[4096];
    mkdirs(s->dir, "host/real/sub");
    snprintf(path, sizeof(path), "%s/host/real/sub/file", s->dir);
    put(path, "inside\n", 7);
    snprintf(path, sizeof(path), "%s/host/abs", s->dir);
    assert_int_equal(symlink("/real", path), 0);
    snprintf(path, sizeof(path), "%s/host/rel", s->dir);
    assert_int_equal(symlink("real/sub", path), 0);
    snprintf(path, sizeof(path), "%s/host/real/sub/link", s->dir);
    assert_int_equal(symlink("file", path), 0);

    struct buf b;
    buf_init(&b);
    assert_int_equal(read_beneath(s->host, "/real//sub/file", &b, 100), 0);
    assert_string_equal(b.data, "inside\n");
    assert_int_equal(read_beneath(s->host, "abs/sub/file", &b, 100), 0);
    assert_int_equal(read_beneath(s->host, "rel/file", &b, 100), 0);
    assert_int_equal(read_beneath(s->host, "real/sub/link", &b, 100), -ELOOP);
    assert_int_equal(read_beneath(s->host, "real/sub/file", &b, 6), -EFBIG);
    assert_string_equal(b.data, "");
    assert_int_equal(read_beneath(s->host, "../../../../../etc/passwd", &b, 1 << 20), -ENOENT);
    assert_int_equal(read_beneath(s->host, "real", &b, 100), -EINVAL);

    int fd = open_beneath_walk(s->host, "/real//sub/file", O_RDONLY);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(open_beneath_walk(s->host, "abs/sub/file", O_RDONLY), -ENOTDIR);
    assert_int_equal(open_beneath_walk(s->host, "real/sub/link", O_RDONLY), -ELOOP);
    assert_int_equal(open_beneath_walk(s->host, "real/../real/sub/file", O_RDONLY), -EXDEV);
    assert_int_equal(open_beneath_walk(s->host, "nothing/file", O_RDONLY), -ENOENT);
    fd = open_beneath_walk(s->host, "", O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    close(fd);
    buf_free(&b);
}

/* --- A process: its /proc/PID directory ---------------------------------- */

static void test_collect(void **state)
{
    const struct tree *t = *state;
    int pid = open_dir("proc/4242");
    struct container_info ci;
    assert_int_equal(containers_collect(t->host, pid, &ci), 0);
    expect_info(&ci, RUNTIME_CONTAINERD, ID_K8S, "train", UID, "trainer-0", "ml", "trainer-0");
    containers_free(&ci);
    close(pid);

    /* No cgroup file: the process is gone. */
    int empty = open_dir("ctr");
    assert_int_equal(containers_collect(t->host, empty, &ci), -ENOENT);
    assert_int_equal(ci.runtime, RUNTIME_NONE);
    close(empty);

    /* This process, on the real host: whatever it is in, no error. */
    int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_int_equal(containers_collect(root, self, &ci), 0);
    containers_free(&ci);
    close(self);
    close(root);
}

/* The struct keeps the bytes; the writers escape them. */
static void test_escaped_output(void **state)
{
    const struct tree *t = *state;
    struct container_info ci;
    lookup_form(t, "hybrid-memory-wins", -1, &ci);
    struct buf out;
    buf_init(&out);
    struct jsonw w;
    jw_init(&w, &out);
    jw_obj(&w, NULL);
    jw_str(&w, "name", ci.name);
    jw_str(&w, "hostname", ci.hostname);
    jw_obj_end(&w);
    assert_string_equal(out.data,
                        "{\"name\":\"\\u001b[31mred\\nline\xef\xbf\xbd \\ufffd\\ufffd end\","
                        "\"hostname\":\"host\\u001b]0;owned\\u0007\"}");
    buf_reset(&out);
    esc_term(&out, ci.name, 0);
    assert_string_equal(out.data, "\\e[31mred\\nline\xef\xbf\xbd \\xff\\xfe end");
    buf_free(&out);
    containers_free(&ci);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgroup_forms),
        cmocka_unit_test(test_path_edges),
        cmocka_unit_test(test_jsonget),
        cmocka_unit_test(test_docker_config),
        cmocka_unit_test(test_kube_names),
        cmocka_unit_test_setup_teardown(test_lookup_docker, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_lookup_kube, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_lookup_user_delegated, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_lookup_state, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_lookup_named, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_lookup_ctrd, setup_tree, teardown_tree),
        cmocka_unit_test(test_ctrd_shapes),
        cmocka_unit_test(test_same),
        cmocka_unit_test(test_label),
        cmocka_unit_test(test_storage_conf),
        cmocka_unit_test(test_jsonget_where),
        cmocka_unit_test_setup_teardown(test_collect, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_escaped_output, setup_tree, teardown_tree),
        cmocka_unit_test_setup_teardown(test_hostile_files, setup_scratch, teardown_scratch),
        cmocka_unit_test_setup_teardown(test_open_beneath, setup_scratch, teardown_scratch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
