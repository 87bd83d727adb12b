/* act/shmmgr.c: a stand-in manager (a child with a listening unix socket)
 * whose client is this process: found while connected, gone once closed. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "act/shmmgr.h"

static void test_socket_inode(void **state)
{
    (void)state;
    unsigned long ino;
    assert_true(shmmgr_socket_inode("socket:[12345]", &ino));
    assert_int_equal(ino, 12345);
    assert_false(shmmgr_socket_inode("pipe:[12345]", &ino));
    assert_false(shmmgr_socket_inode("socket:[]", &ino));
    assert_false(shmmgr_socket_inode("socket:[12x]", &ino));
    assert_false(shmmgr_socket_inode("/dev/shm/torch_1_2", &ino));
}

static void test_clients(void **state)
{
    (void)state;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    /* An abstract name: nothing on disk. */
    snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "shmwatch-test-%d", (int)getpid());
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
                                 strlen(addr.sun_path + 1));
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t mgr = test_fork();
    assert_true(mgr >= 0);
    if (mgr == 0) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (bind(s, (struct sockaddr *)&addr, alen) != 0 || listen(s, 4) != 0)
            _exit(1);
        (void)!write(ready[1], "x", 1);
        for (;;) {
            int c = accept(s, NULL, NULL);
            (void)c; /* keep every connection open, like a manager */
        }
    }
    close(ready[1]);
    char ch;
    assert_int_equal(read(ready[0], &ch, 1), 1);
    close(ready[0]);

    struct sysroot sys = test_sysroot("/proc", NULL);
    struct shmmgr_clients c;
    assert_int_equal(shmmgr_clients(&sys, mgr, &c), 0);
    assert_int_equal(c.sockets, 1); /* the listener */
    assert_int_equal(c.n, 0);

    int cl = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(connect(cl, (struct sockaddr *)&addr, alen), 0);
    /* Wait for the accept. */
    for (int i = 0; i < 500; i++) {
        assert_int_equal(shmmgr_clients(&sys, mgr, &c), 0);
        if (c.sockets == 2)
            break;
        usleep(2000);
    }
    if (!c.complete && strstr(c.why, "sock_diag")) {
        kill(mgr, SIGKILL);
        waitpid(mgr, NULL, 0);
        sysroot_close(&sys);
        skip();
    }
    assert_int_equal(c.sockets, 2);
    assert_int_equal(c.connections, 1);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.pids[0], getpid());

    close(cl); /* the client leaves: the manager's socket has no live peer */
    assert_int_equal(shmmgr_clients(&sys, mgr, &c), 0);
    assert_int_equal(c.sockets, 2);
    assert_int_equal(c.n, 0);

    kill(mgr, SIGKILL);
    waitpid(mgr, NULL, 0);
    assert_true(shmmgr_clients(&sys, mgr, &c) < 0);
    sysroot_close(&sys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_socket_inode),
        cmocka_unit_test(test_clients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
