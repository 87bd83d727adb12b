/* The node view (--all) on a scene built by hand: the host's /dev/shm and
 * two containers', each container in a pid namespace of its own with a
 * DataLoader whose creator pids are its own (the same segment name in both),
 * each with its own memory cgroup. The model keeps groups, creators and
 * budgets per container; JSON, text and Prometheus carry the container of
 * each mount, group and process, hostile names escaped. */
#include <sys/sysmacros.h>

#include "testutil.h"
#include "fake_scene.h"
#include "model/model.h"
#include "model/snapload.h"
#include "report/report.h"
#include "ui/ui_priv.h"
#include "util/xalloc.h"

#define PY "/usr/bin/python3.11"
#define PIDNS_A 4026532111ul
#define PIDNS_B 4026532222ul
#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
/* A container name with a terminal escape, a quote and a newline. */
#define EVIL "evil\x1b[31m\"x\n"

static void add_file(struct scan *s, size_t mount, const char *name, ino_t ino, uint64_t bytes)
{
    struct shm_file *f = VEC_PUSH(s->files.items, s->files.n, s->files.cap);
    memset(f, 0, sizeof(*f));
    f->mount = mount;
    f->name = files_name(&s->files, name);
    f->dev = s->mounts.items[mount].dev;
    f->ino = ino;
    f->type = FT_REGULAR;
    f->size = f->alloc = bytes;
    f->uid = 0;
    f->mtime = 1000;
}

static void add_holder(struct scan *s, size_t mount, pid_t pid, int fd, ino_t ino,
                       const char *name, uint64_t bytes)
{
    struct shm_holder *h = VEC_PUSH(s->holders.items, s->holders.n, s->holders.cap);
    memset(h, 0, sizeof(*h));
    h->pid = pid;
    h->fd = fd;
    h->dev = s->mounts.items[mount].dev;
    h->ino = ino;
    char *path = str_printf("/dev/shm/%s", name);
    h->path = strpool_dup(&s->holders.paths, path);
    free(path);
    h->stat_ok = true;
    h->size = h->alloc = bytes;
}

static struct proc *in_ns(struct proc *p, unsigned long pidns, pid_t nspid)
{
    p->pidns = pidns;
    p->nspid = nspid;
    return p;
}

/* Mount 0 the host's (0:45), 1 container alpha's (0:50), 2 the hostile
 * one's (0:51), a pod's container. */
static struct scan *node_scene(void)
{
    struct scan *s = fake_scene_empty();
    fake_add_mount(s, 50, 256 * MiB, 8 * MiB);
    fake_add_mount(s, 51, 64 * MiB, 60 * MiB);

    fake_add_proc(s, 10, 1, 10, 'S', "python3", PY);
    fake_add_proc(s, 11, 10, 10, 'S', "pt_data_worker", PY);
    fake_add_proc(s, 50, 1, 50, 'S', "containerd-shim", "/usr/bin/containerd-shim");
    in_ns(fake_add_proc(s, 100, 50, 100, 'S', "python3", PY), PIDNS_A, 1);
    in_ns(fake_add_proc(s, 101, 100, 100, 'S', "pt_data_worker", PY), PIDNS_A, 2);
    in_ns(fake_add_proc(s, 200, 50, 200, 'S', "python3", PY), PIDNS_B, 1);
    in_ns(fake_add_proc(s, 201, 200, 200, 'S', "pt_data_worker", PY), PIDNS_B, 2);
    procs_sort(&s->procs);

    /* The host's: created by worker 11, held by its main. */
    add_file(s, 0, "torch_11_0", 1, 2 * MiB);
    add_holder(s, 0, 10, 5, 1, "torch_11_0", 2 * MiB);
    /* One name in both containers: creator 2 is worker 101 in alpha and
     * worker 201 in the other. */
    add_file(s, 1, "torch_2_0", 1, 4 * MiB);
    add_holder(s, 1, 100, 7, 1, "torch_2_0", 4 * MiB);
    add_file(s, 2, "torch_2_0", 1, 8 * MiB);
    add_holder(s, 2, 200, 7, 1, "torch_2_0", 8 * MiB);
    /* In alpha, pid 201 is nobody (a host pid of the other container):
     * an orphan there. */
    add_file(s, 1, "torch_201_0", 2, 1 * MiB);

    s->devs = xcalloc(3, sizeof(*s->devs));
    for (size_t i = 0; i < 3; i++)
        s->devs[i] = s->mounts.items[i].dev;
    nsmap_init(&s->ns, s->devs, 3);
    s->ns.reach[1].pidns = xcalloc(1, sizeof(unsigned long));
    s->ns.reach[1].pidns[0] = PIDNS_A;
    s->ns.reach[1].npidns = 1;
    s->ns.reach[2].pidns = xcalloc(1, sizeof(unsigned long));
    s->ns.reach[2].pidns[0] = PIDNS_B;
    s->ns.reach[2].npidns = 1;

    struct scan_node *n = &s->node;
    n->all = true;
    n->nctrs = n->ctrs_cap = 2;
    n->ctrs = xcalloc(2, sizeof(*n->ctrs));
    n->ctrs[0].info.runtime = RUNTIME_DOCKER;
    n->ctrs[0].info.id = xstrdup(ID_A);
    n->ctrs[0].info.name = xstrdup("alpha");
    n->ctrs[0].info.hostname = xstrdup("aaaaaaaaaaaa");
    n->ctrs[0].pid = 100;
    fake_cgroup(&n->ctrs[0].cgroup, "/docker/" ID_A, 1024 * MiB, 100 * MiB);
    n->ctrs[1].info.runtime = RUNTIME_CONTAINERD;
    n->ctrs[1].info.id = xstrdup(ID_B);
    n->ctrs[1].info.name = xstrdup(EVIL);
    /* A pod name with a C1 control, a bidi override and a zero-width space. */
    n->ctrs[1].info.pod = xstrdup("trainer-0\xc2\x9b\xe2\x80\xae\xe2\x80\x8b");
    n->ctrs[1].info.namespace = xstrdup("ml");
    n->ctrs[1].info.pod_uid = xstrdup("0d1c2b3a-1111-2222-3333-444455556666");
    n->ctrs[1].pid = 200;
    fake_cgroup(&n->ctrs[1].cgroup, "/kubepods/pod0d1c2b3a/" ID_B, 512 * MiB, 50 * MiB);
    node_single(n, &s->mounts);
    n->all = true;
    n->mounts[1].host_sees = n->mounts[2].host_sees = false;
    n->mounts[1].owner = 0;
    n->mounts[2].owner = 1;
    n->mounts[1].ctrs = xcalloc(1, sizeof(size_t));
    n->mounts[1].ctrs[0] = 0;
    n->mounts[1].nctrs = 1;
    n->mounts[2].ctrs = xcalloc(1, sizeof(size_t));
    n->mounts[2].ctrs[0] = 1;
    n->mounts[2].nctrs = 1;
    n->nprocs = s->procs.n;
    n->proc_ctr = xcalloc(s->procs.n, sizeof(size_t));
    for (size_t i = 0; i < s->procs.n; i++) {
        unsigned long ns = s->procs.items[i].pidns;
        n->proc_ctr[i] = ns == PIDNS_A ? 0 : ns == PIDNS_B ? 1 : NODE_HOST;
    }
    return s;
}

static int setup(void **state)
{
    return fake_fixture_setup(state, node_scene());
}

static const struct segment *seg(const struct model *m, size_t mount, const char *name)
{
    for (size_t i = 0; i < m->nsegs; i++)
        if (m->segs[i].mount == mount && strcmp(m->segs[i].name, name) == 0)
            return &m->segs[i];
    fail_msg("no segment %s on mount %zu", name, mount);
    return NULL;
}

static void test_groups_per_container(void **state)
{
    struct fake_fixture *f = *state;
    const struct model *m = &f->m;
    assert_int_equal(m->ngroups, 3);
    const struct group *h = model_find_group(m, 10), *a = model_find_group(m, 100),
                       *b = model_find_group(m, 200);
    assert_non_null(h);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(h->ctr == NODE_HOST);
    assert_int_equal(a->ctr, 0);
    assert_int_equal(b->ctr, 1);
    assert_int_equal(a->nworkers, 1);
    assert_int_equal(a->workers[0], 101);
    assert_int_equal(b->nworkers, 1);
    assert_int_equal(b->workers[0], 201);
    assert_int_equal(model_find_proc(m, 101)->ctr, 0);
    assert_int_equal(model_find_proc(m, 201)->ctr, 1);
    assert_true(model_find_proc(m, 11)->ctr == NODE_HOST);
}

static void test_creators_per_container(void **state)
{
    struct fake_fixture *f = *state;
    const struct model *m = &f->m;
    /* One name, two creators: each container's own pid 2. */
    const struct segment *a = seg(m, 1, "torch_2_0"), *b = seg(m, 2, "torch_2_0");
    assert_true(a->creator_alive);
    assert_int_equal(a->creator_pid, 101);
    assert_int_equal(a->group, 100);
    assert_true(b->creator_alive);
    assert_int_equal(b->creator_pid, 201);
    assert_int_equal(b->group, 200);
    /* 201 is alive on the host's /proc, but not in alpha's pid namespace. */
    const struct segment *o = seg(m, 1, "torch_201_0");
    assert_false(o->creator_alive);
    assert_int_equal(o->state, SEG_ORPHAN);
    assert_int_equal(o->group, 0);
}

static void test_budget_per_container(void **state)
{
    struct fake_fixture *f = *state;
    const struct model *m = &f->m;
    const struct budget *h = model_mount_budget(m, 0), *a = model_mount_budget(m, 1),
                        *b = model_mount_budget(m, 2);
    /* The host: no cgroup, so MemTotal and its own processes' RSS only
     * (10 and 11 of the seven, 10 MiB each). */
    assert_int_equal(h->limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(h->app, 20 * MiB);
    assert_int_equal(h->shm_size, 64 * MiB);
    assert_int_equal(a->limit_source, LIMIT_CGROUP);
    assert_int_equal(a->limit, 1024 * MiB);
    assert_int_equal(a->app, 100 * MiB);
    assert_int_equal(a->shm_size, 256 * MiB);
    assert_int_equal(b->limit, 512 * MiB);
    assert_int_equal(b->shm_used, 60 * MiB);
    /* 60 of 64 MiB: past the critical fill of 95 %? no; past warn 80 %. */
    assert_int_not_equal(b->verdict, VERDICT_OK);
    assert_int_equal(a->verdict, VERDICT_OK);
    /* The top-level budget is the host's first mount's, as without --all. */
    assert_int_equal(m->budget.limit_source, LIMIT_MEMTOTAL);
    assert_int_equal(m->budget.app, 20 * MiB);
}

/* Fails naming the first of want[0..n) that text does not contain. */
static void assert_has_all(const char *text, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strstr(text, want[i]))
            fail_msg("missing %s in %s", want[i], text);
}
#define ASSERT_HAS_ALL(text, want) assert_has_all((text), (want), sizeof(want) / sizeof((want)[0]))

static void test_json_fields(void **state)
{
    struct fake_fixture *f = *state;
    report_json(&f->out, &f->m);
    const char *j = f->out.data;
    static const char *const keys[] = {
        "\"mounts\":[{\"id\":\"0:45\",\"containers\":[],\"cgroup\":null,\"budget\":{",
        "{\"id\":\"0:50\",\"containers\":[{\"id\":\"" ID_A "\",\"name\":\"alpha\","
        "\"runtime\":\"docker\",\"pod_uid\":null,\"pod\":null,\"namespace\":null,"
        "\"hostname\":\"aaaaaaaaaaaa\",\"pid\":100,\"containerd_namespace\":null}],"
        "\"cgroup\":{\"version\":1,"
        "\"path\":\"/docker/" ID_A "\",\"limit_bytes\":1073741824,",
        "\"name\":\"evil\\u001b[31m\\\"x\\n\",\"runtime\":\"containerd\","
        "\"pod_uid\":\"0d1c2b3a-1111-2222-3333-444455556666\",\"pod\":\"trainer-0\\u009b\\u202e\\u200b\","
        "\"namespace\":\"ml\",\"hostname\":null,\"pid\":200,\"containerd_namespace\":null}]",
        "\"limit_bytes\":536870912,\"limit_source\":\"cgroup\"",
        "\"mount_id\":\"0:51\",\"name\":\"torch_2_0\"",
        "\"mount_id\":\"0:45\",\"name\":\"torch_11_0\"",
        "\"start_ticks\":0,\"container\":\"" ID_A "\",\"containerd_namespace\":null}",
        "\"start_ticks\":0,\"container\":null,\"containerd_namespace\":null}",
        "\"container\":\"" ID_B "\",\"containerd_namespace\":null}",
        "\"all\":true",
    };
    ASSERT_HAS_ALL(j, keys);
    assert_null(strchr(j, '\x1b'));
}

static void test_text_headings(void **state)
{
    struct fake_fixture *f = *state;
    report_text(&f->out, &f->m, false);
    const char *t = f->out.data;
    const char *host = strstr(t, "== HOST\n"), *a = strstr(t, "== CONTAINER alpha (docker aaaaaaaaaaaa, ");
    const char *b = strstr(t, "== CONTAINER evil\\e[31m\"x\\n (containerd bbbbbbbbbbbb, pod ml/trainer-0\\u{9b}\\u{202e}\\u{200b}, pid 200)");
    if (!host || !a || !b)
        fail_msg("headings missing in %s", t);
    assert_true(host < a && a < b);
    /* Each container's group under its own heading. */
    const char *ga = strstr(t, "main 100"), *gb = strstr(t, "main 200"), *gh = strstr(t, "main 10 ");
    assert_non_null(ga);
    assert_non_null(gb);
    assert_non_null(gh);
    assert_true(host < gh && gh < a && a < ga && ga < b && b < gb);
    assert_non_null(strstr(t, "BUDGET of /dev/shm, cgroup /docker/" ID_A "\n  limit 1.0 GiB (cgroup)"));
    assert_null(strchr(t, '\x1b'));
    /* The dashboard's names: a Docker container's and a pod's without a
     * containerd namespace are their names. */
    char label[128];
    ui_ctr_label(&f->m, 0, label, sizeof(label));
    assert_string_equal(label, "alpha");
    ui_ctr_label(&f->m, 1, label, sizeof(label));
    assert_string_equal(label, "evil\\e[31m\"x\\n");
}

/* A third container (index 2) of the fixture, of runtime rt, id and name,
 * with no mount of its own: it sees the first `sees` mounts; the model
 * and the text report are then made again. */
static struct node_ctr *third_ctr(struct fake_fixture *f, enum container_runtime rt,
                                  const char *id, const char *name, pid_t pid, size_t sees)
{
    struct scan_node *n = &f->s->node;
    struct node_ctr *g = VEC_PUSH(n->ctrs, n->nctrs, n->ctrs_cap);
    memset(g, 0, sizeof(*g));
    g->info.runtime = rt;
    g->info.id = xstrdup(id);
    g->info.name = name ? xstrdup(name) : NULL;
    g->pid = pid;
    for (size_t i = 0; i < sees; i++) {
        struct node_mount *nm = &n->mounts[i];
        nm->ctrs = xrealloc(nm->ctrs, (nm->nctrs + 1) * sizeof(*nm->ctrs));
        nm->ctrs[nm->nctrs++] = 2;
    }
    return g;
}

static void text_again(struct fake_fixture *f)
{
    model_free(&f->m);
    fake_fixture_build(f);
    report_text(&f->out, &f->m, false);
}

/* A container with no mount of its own (--ipc=container:alpha, and the
 * host's /dev/shm bound in): its heading says which mounts it sees and
 * under which heading their figures are written. */
static void test_text_mounts_seen(void **state)
{
    struct fake_fixture *f = *state;
    third_ctr(f, RUNTIME_DOCKER, "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
              "guest", 300, 2); /* the host's mount and alpha's */
    text_again(f);
    if (!strstr(f->out.data, "== CONTAINER guest (docker cccccccccccc, pid 300)\nMOUNTS\n"
                             "  none of its own: it sees /dev/shm (0:45), written under HOST\n"
                             "  and /dev/shm (0:50), written under CONTAINER alpha\n"))
        fail_msg("guest's mounts are not named in %s", f->out.data);
}

/* A container with neither a name nor a hostname (a digest id, as the
 * kubelet's or nerdctl's without annotations) is headed by its id's first
 * 12 digits and says its runtime, not "of pid N" alone. */
static void test_text_heading_unnamed(void **state)
{
    struct fake_fixture *f = *state;
    struct node_ctr *g = third_ctr(
        f, RUNTIME_CONTAINERD, "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
        NULL, 400, 1);
    g->info.containerd_namespace = xstrdup("k8s.io");
    text_again(f);
    if (!strstr(f->out.data, "== CONTAINER dddddddddddd (containerd k8s.io/dddddddddddd, pid 400)\n"))
        fail_msg("the unnamed container's heading: %s", f->out.data);
}

/* The budget's sentences name the cgroup's other shm mount by its path,
 * which comes from the system: the text report escapes them as every name.
 * Here alpha's mount, at a hostile path, is counted to the hostile one's
 * cgroup beside its own 0:51. */
static void test_text_advice_escaped(void **state)
{
    struct fake_fixture *f = *state;
    struct shm_mount *a = &f->s->mounts.items[1];
    free(a->path);
    a->path = xstrdup("/run/\x1b[31mx");
    f->s->node.mounts[1].owner = 1;
    model_free(&f->m);
    fake_fixture_build(f);
    report_text(&f->out, &f->m, false);
    if (!strstr(f->out.data, "8.0 MiB now on /run/\\e[31mx)") || strchr(f->out.data, '\x1b'))
        fail_msg("the other shm mount's path is not escaped in %s", f->out.data);
}

static void test_prometheus_labels(void **state)
{
    struct fake_fixture *f = *state;
    report_prometheus(&f->out, &f->m);
    const char *p = f->out.data;
    static const char *const lines[] = {
        "shmwatch_mount_used_bytes{mount=\"/dev/shm\",mount_id=\"0:45\",container=\"\","
        "container_id=\"\",pod=\"\",namespace=\"\",containerd_namespace=\"\"} 41943040\n",
        "shmwatch_mount_used_bytes{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"alpha\","
        "container_id=\"" ID_A "\",pod=\"\",namespace=\"\",containerd_namespace=\"\"} 8388608\n",
        "shmwatch_mount_used_bytes{mount=\"/dev/shm\",mount_id=\"0:51\","
        "container=\"evil?[31m\\\"x\\n\",container_id=\"" ID_B "\",pod=\"trainer-0???\","
        "namespace=\"ml\",containerd_namespace=\"\"} 62914560\n",
        "shmwatch_budget_limit_bytes{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"alpha\"",
        "shmwatch_cgroup_limit_bytes{mount=\"/dev/shm\",mount_id=\"0:51\"",
        "shmwatch_cgroup_oom_kills_total{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"alpha\","
        "container_id=\"" ID_A "\",pod=\"\",namespace=\"\",containerd_namespace=\"\"} 3\n",
        "shmwatch_segments{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"alpha\","
        "container_id=\"" ID_A "\",pod=\"\",namespace=\"\",containerd_namespace=\"\","
        "state=\"orphan\",kind=\"torch\"} 1\n",
    };
    ASSERT_HAS_ALL(p, lines);
    assert_null(strchr(p, '\x1b'));
    /* The unlabelled budget of one world is not there beside the labelled. */
    assert_null(strstr(p, "\nshmwatch_budget_limit_bytes "));
}

/* Each mount's inodes (statfs) in the JSON and as labelled series: a
 * container's /dev/shm out of inodes refuses every new segment whatever
 * its free bytes; a mount whose statfs failed has no sample. */
static void test_inode_figures(void **state)
{
    struct fake_fixture *f = *state;
    struct shm_mount *a = &f->s->mounts.items[1]; /* alpha's, 0:50 */
    a->inodes = 1000;
    a->inodes_free = 0;
    f->s->mounts.items[2].stat_ok = false; /* 0:51's statfs failed */
    report_json(&f->out, &f->m);
    if (!strstr(f->out.data, "\"used_pct\":3.125,\"inodes\":1000,\"inodes_free\":0,"))
        { fputs(f->out.data, stderr); fail_msg("no inode figures of 0:50 in the JSON above"); }
    buf_reset(&f->out);
    report_prometheus(&f->out, &f->m);
    const char *p = f->out.data;
    static const char *const lines[] = {
        "shmwatch_mount_inodes{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"alpha\","
        "container_id=\"" ID_A "\",pod=\"\",namespace=\"\",containerd_namespace=\"\"} 1000\n",
        "shmwatch_mount_inodes_free{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"alpha\","
        "container_id=\"" ID_A "\",pod=\"\",namespace=\"\",containerd_namespace=\"\"} 0\n",
    };
    ASSERT_HAS_ALL(p, lines);
    assert_null(strstr(p, "shmwatch_mount_inodes{mount=\"/dev/shm\",mount_id=\"0:51\""));
}

/* A mount two containers see (a pod's shm): its owner is the one charged
 * for its pages, not the first met (the pause container). */
static void test_shared_mount_owner(void **state)
{
    struct fake_fixture *f = *state;
    struct scan_node *n = &f->s->node;
    struct node_mount m = {.ctrs = (size_t[]){0, 1}, .nctrs = 2, .host_sees = false};
    const struct mount_list *ml = &(struct mount_list){0};
    n->ctrs[0].cgroup.shmem = 1 * MiB;
    n->ctrs[1].cgroup.shmem = 40 * MiB;
    assert_int_equal(node_owner_of(n, ml, &m), 1);
    n->ctrs[1].cgroup.shmem = 1 * MiB;
    assert_int_equal(node_owner_of(n, ml, &m), 0); /* a tie: the first */
    n->ctrs[0].cgroup.present = false;
    assert_int_equal(node_owner_of(n, ml, &m), 1); /* one without a cgroup owns nothing */
    m.host_sees = true;
    assert_true(node_owner_of(n, ml, &m) == NODE_HOST); /* --ipc=host: the host's */
}

/* A mount two containers share (--ipc=container:X): the one that wrote into
 * it owns it, not the one whose own other tmpfs holds more. alpha's cgroup
 * holds 13 MiB, 8 of them its own 0:50's; the other's 61 MiB, 60 of them its
 * own 0:51's: alpha wrote 5 MiB into the shared mount, the other 1. */
static void test_shared_mount_owner_own_tmpfs(void **state)
{
    struct fake_fixture *f = *state;
    struct scan_node *n = &f->s->node;
    struct node_mount m = {.ctrs = (size_t[]){0, 1}, .nctrs = 2, .host_sees = false};
    n->ctrs[0].cgroup.shmem = 13 * MiB;
    n->ctrs[1].cgroup.shmem = 61 * MiB;
    assert_int_equal(node_owner_of(n, &f->s->mounts, &m), 0);
    n->ctrs[0].cgroup.shmem = 8 * MiB; /* alpha wrote nothing into it */
    assert_int_equal(node_owner_of(n, &f->s->mounts, &m), 1);
}

/* Without --all: the same fields, the host's, and nothing old changed. */
static void test_single_world(void **state)
{
    (void)state;
    struct scan *s = fake_scene();
    node_single(&s->node, &s->mounts);
    struct model_opts o;
    model_opts_default(&o);
    struct model m;
    model_build(s, &o, &m);
    struct buf out;
    buf_init(&out);
    report_json(&out, &m);
    assert_non_null(strstr(out.data, "\"mounts\":[{\"id\":\"0:45\",\"containers\":[],"));
    assert_non_null(strstr(out.data, "\"all\":false"));
    assert_null(strstr(out.data, "\"container\":\""));
    buf_free(&out);
    buf_init(&out);
    report_prometheus(&out, &m);
    assert_non_null(strstr(out.data, "shmwatch_mount_used_bytes{mount=\"/dev/shm\"} 41943040\n"));
    assert_non_null(strstr(out.data, "\nshmwatch_budget_limit_bytes "));
    buf_free(&out);
    model_free(&m);
    scan_free(s);
    free(s);
}

/* f's model written as a snapshot (into f->out) and read back into s and
 * m; returns the parsed document, for jd_free once they are freed. */
static struct jd *read_back(struct fake_fixture *f, struct scan *s, struct model *m)
{
    report_json(&f->out, &f->m);
    char err[256];
    struct jd *doc = jd_parse(f->out.data, f->out.len, err, sizeof(err));
    assert_non_null(doc);
    assert_int_equal(snapload_build(doc, s, m, err, sizeof(err)), 0);
    return doc;
}

/* m and s, read back from f's snapshot (parsed as doc), written again are
 * the snapshot, byte for byte; then all three are freed. */
static void assert_written_again(struct fake_fixture *f, struct scan *s, struct model *m,
                                 struct jd *doc)
{
    struct buf again;
    buf_init(&again);
    report_json(&again, m);
    assert_string_equal(again.data, f->out.data);
    buf_free(&again);
    model_free(m);
    scan_free(s);
    jd_free(doc);
}

/* The node view's snapshot read back (model/snapload.c, as replay reads a
 * recording): its containers, each mount's owner and budget, each process's
 * and group's container, and written again the same text. */
static void test_snapshot_read_back(void **state)
{
    struct fake_fixture *f = *state;
    struct scan s;
    struct model m;
    struct jd *doc = read_back(f, &s, &m);
    const struct scan_node *n = model_node(&m);
    assert_true(n->all);
    assert_int_equal(n->nctrs, 2);
    assert_string_equal(n->ctrs[1].info.name, EVIL);
    assert_int_equal(n->ctrs[1].info.runtime, RUNTIME_CONTAINERD);
    assert_true(node_owner_index(n, 0) == NODE_HOST);
    assert_int_equal(node_owner_index(n, 1), 0);
    assert_int_equal(node_owner_index(n, 2), 1);
    assert_string_equal(model_mount_cgroup(&m, 2)->path, "/kubepods/pod0d1c2b3a/" ID_B);
    assert_false(model_mount_seen_by(&m, 1, NODE_HOST));
    assert_true(model_mount_seen_by(&m, 1, 0));
    assert_int_equal(model_proc_ctr(&m, model_scan_proc(&m, 201)), 1);
    assert_int_equal(model_find_group(&m, 100)->ctr, 0);
    assert_written_again(f, &s, &m, doc);
}

/* Two ctr containers of one id in two containerd namespaces, read back
 * from the snapshot: two containers, each owning its own mount with its own
 * cgroup, and each process and group in its own, which the snapshot names
 * by id and containerd namespace; the Prometheus series of each mount say
 * its containerd namespace. A snapshot whose processes and groups do not
 * say the namespace (an older recording) is read by the id alone. */
static void test_snapshot_same_id(void **state)
{
    struct fake_fixture *f = *state;
    struct scan_node *fn = &f->s->node;
    const char *const ns[] = {"probe", "other"};
    for (size_t k = 0; k < 2; k++) {
        struct container_info *ci = &fn->ctrs[k].info;
        containers_free(ci);
        ci->runtime = RUNTIME_CONTAINERD;
        ci->id = xstrdup("web");
        ci->name = xstrdup("web");
        ci->containerd_namespace = xstrdup(ns[k]);
    }
    struct scan s;
    struct model m;
    struct jd *doc = read_back(f, &s, &m);
    const struct scan_node *n = model_node(&m);
    assert_int_equal(n->nctrs, 2);
    assert_int_equal(node_owner_index(n, 1), 0);
    assert_int_equal(node_owner_index(n, 2), 1);
    assert_string_equal(n->ctrs[0].info.containerd_namespace, "probe");
    assert_string_equal(n->ctrs[1].info.containerd_namespace, "other");
    assert_string_equal(model_mount_cgroup(&m, 1)->path, "/docker/" ID_A);
    assert_string_equal(model_mount_cgroup(&m, 2)->path, "/kubepods/pod0d1c2b3a/" ID_B);
    assert_non_null(
        strstr(f->out.data, "\"container\":\"web\",\"containerd_namespace\":\"other\"}"));
    assert_int_equal(model_proc_ctr(&m, model_scan_proc(&m, 101)), 0);
    assert_int_equal(model_proc_ctr(&m, model_scan_proc(&m, 201)), 1);
    assert_int_equal(model_find_group(&m, 100)->ctr, 0);
    assert_int_equal(model_find_group(&m, 200)->ctr, 1);
    assert_written_again(f, &s, &m, doc);
    /* The dashboard names each with its namespace, as the text report's
     * headings do. */
    char label[128];
    ui_ctr_label(&f->m, 0, label, sizeof(label));
    assert_string_equal(label, "probe/web");
    ui_ctr_label(&f->m, 1, label, sizeof(label));
    assert_string_equal(label, "other/web");
    buf_reset(&f->out);
    report_text(&f->out, &f->m, false);
    assert_non_null(strstr(f->out.data, "== CONTAINER web (containerd probe/web, pid 100)"));
    assert_non_null(strstr(f->out.data, "== CONTAINER web (containerd other/web, pid 200)"));

    buf_reset(&f->out);
    report_prometheus(&f->out, &f->m);
    static const char *const lines[] = {
        "shmwatch_mount_used_bytes{mount=\"/dev/shm\",mount_id=\"0:50\",container=\"web\","
        "container_id=\"web\",pod=\"\",namespace=\"\",containerd_namespace=\"probe\"} 8388608\n",
        "shmwatch_mount_used_bytes{mount=\"/dev/shm\",mount_id=\"0:51\",container=\"web\","
        "container_id=\"web\",pod=\"\",namespace=\"\",containerd_namespace=\"other\"} 62914560\n",
    };
    ASSERT_HAS_ALL(f->out.data, lines);

    /* The older snapshot: its processes' and groups' container by id. */
    buf_reset(&f->out);
    report_json(&f->out, &f->m);
    struct buf older;
    buf_init(&older);
    for (const char *p = f->out.data; *p;) {
        const char *k = strstr(p, "\"container\":\"web\",\"containerd_namespace\":");
        if (!k) {
            buf_adds(&older, p);
            break;
        }
        buf_add(&older, p, (size_t)(k - p));
        buf_adds(&older, "\"container\":\"web\"");
        p = strchr(k, '}');
    }
    char err[256];
    doc = jd_parse(older.data, older.len, err, sizeof(err));
    assert_non_null(doc);
    assert_int_equal(snapload_build(doc, &s, &m, err, sizeof(err)), 0);
    assert_int_equal(model_node(&m)->nctrs, 2);
    assert_int_equal(model_proc_ctr(&m, model_scan_proc(&m, 201)), 0);
    assert_int_equal(model_find_group(&m, 200)->ctr, 0);
    buf_free(&older);
    model_free(&m);
    scan_free(&s);
    jd_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_groups_per_container, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_creators_per_container, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_budget_per_container, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_json_fields, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_headings, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_mounts_seen, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_heading_unnamed, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_text_advice_escaped, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_prometheus_labels, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_inode_figures, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_shared_mount_owner, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_shared_mount_owner_own_tmpfs, setup,
                                        fake_fixture_teardown),
        cmocka_unit_test(test_single_world),
        cmocka_unit_test_setup_teardown(test_snapshot_read_back, setup, fake_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_same_id, setup, fake_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
