/* How far a settings file (configuration, theme) must be trusted before it
 * is read. Run as root, a file someone else can write would decide what
 * root does (where the action log goes, what the dashboard may remove): as
 * ssh and sudo do, such a file is refused, unless the user named it on the
 * command line, where it is read with a warning. Not root: every file is
 * the user's own business. The rule itself is safefile_trusted(). */
#ifndef SHMWATCH_TRUST_H
#define SHMWATCH_TRUST_H

enum config_trust {
    CONFIG_TRUST_ANY,     /* no check (tests, fuzzing) */
    CONFIG_TRUST_REQUIRE, /* found by search or named in another file: refused if untrusted */
    CONFIG_TRUST_WARN,    /* named on the command line: read, with a warning if untrusted */
};

#endif
