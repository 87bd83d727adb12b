/* User names without NSS: getpwuid_r does not work in a static binary, and
 * the names that matter are those of the watched root (a container's own
 * /etc/passwd when watching it with --pid), not this process's. */
#ifndef SHMWATCH_PASSWD_H
#define SHMWATCH_PASSWD_H

#include <stddef.h>
#include <sys/types.h>

/* The largest passwd file read: a bigger one is refused, not truncated. */
#define PASSWD_MAX (4u << 20)

/* Finds uid in text of /etc/passwd's format (len bytes, NULs allowed; lines
 * "name:password:uid:..."; NIS "+"/"-" lines, blank and malformed lines are
 * skipped; the first match wins) and copies its name, unescaped, into out
 * (n bytes, NUL-terminated). Returns 0, -ENOENT when no line has uid, or
 * -ENAMETOOLONG when the name does not fit. */
int passwd_find(const char *text, size_t len, uid_t uid, char *out, size_t n);

/* passwd_find on rootfd's etc/passwd, read with read_beneath (no link
 * followed out of rootfd, at most PASSWD_MAX bytes). Returns 0 or -errno. */
int passwd_name_at(int rootfd, uid_t uid, char *out, size_t n);

#endif
