/* Every option of every command, once (see cli/opttable.h). A row's place
 * is its place in --help; a name given to several commands with different
 * help has one row per help. doc/shmwatch.1 and completions/ list the same
 * options: the completions test compares them with --help. */
#include "cli/opttable.h"

#include <stdint.h>

#define F(field) offsetof(struct options, field)

#define MAIN CLI_IN(CLI_MAIN)
#define CLEAN CLI_IN(CLI_CLEAN)
#define REAP CLI_IN(CLI_REAP)
#define PLAN CLI_IN(CLI_PLAN)
#define RECORD CLI_IN(CLI_RECORD)
#define REPLAY CLI_IN(CLI_REPLAY)
#define WHY CLI_IN(CLI_WHY)

/* --pid's value, a process id, whichever command takes it. */
#define PID_VALUE                                                                                  \
    .offset = F(pid), .min = 1, .max = 0x7fffffff, .bad = "--pid: '%s' is not a process id"

/* "set_offset 0: none" needs no flag at offset 0. */
_Static_assert(offsetof(struct options, cmd) == 0, "the first field is not a flag");

const struct cli_opt cli_opts[] = {
    /* The snapshot modes. */
    {"once", 0, CLI_CHOICE, MAIN, NULL, "print a text snapshot and exit", .offset = F(mode),
     .value = MODE_ONCE, .bad = "--once, --json and --prometheus exclude each other"},
    {"json", 0, CLI_CHOICE, MAIN, NULL, "print a JSON snapshot (schema 1) and exit",
     .offset = F(mode), .value = MODE_JSON,
     .bad = "--once, --json and --prometheus exclude each other"},
    {"prometheus", 0, CLI_CHOICE, MAIN, NULL, "print Prometheus metrics and exit",
     .offset = F(mode), .value = MODE_PROMETHEUS,
     .bad = "--once, --json and --prometheus exclude each other"},
    {"prometheus-file", 0, CLI_PATH, MAIN, "PATH",
     "write metrics to PATH atomically every --interval\n"
     "(default 15 s) until stopped or --count is reached",
     .offset = F(prometheus_file)},
    {"interval", 0, CLI_DURATION, MAIN, "S",
     "seconds between snapshots (with --json/--prometheus-file)\n"
     "or between holder scans (dashboard; default 2), from\n"
     "0.05 s to 1 day; not with --once or --prometheus (one\n"
     "snapshot)",
     .offset = F(interval), .set_offset = F(interval_set), .min = 0.05, .max = 86400,
     .bad = "--interval: '%s' is not a duration from 0.05 s to 1 day"},
    {"count", 0, CLI_INT, MAIN, "N",
     "number of snapshots with --interval or --prometheus-file\n"
     "(0 = forever); a scan still running after 3 intervals\n"
     "(at least 10 s) is reported as stalled in its place",
     .offset = F(count), .set_offset = F(count_set), .min = 0, .max = 1000000000,
     .bad = "--count: '%s' is not a whole number >= 0"},

    /* clean and reap */
    {"dry-run", 'n', CLI_FLAG, CLEAN, NULL, "check everything, remove nothing",
     .offset = F(dry_run)},
    {"dry-run", 'n', CLI_FLAG, REAP, NULL, "check everything, signal nothing",
     .offset = F(dry_run)},
    {"yes", 'y', CLI_FLAG, CLEAN | REAP, NULL, "do not ask", .offset = F(yes)},
    {"all-unheld", 0, CLI_FLAG, CLEAN, NULL,
     "also remove unheld segments (owner unknown) that are\n"
     "older than --min-age",
     .offset = F(all_unheld)},
    {"min-age", 0, CLI_DURATION, CLEAN, "DUR",
     "minimum age of an unheld segment (default: the setting\n"
     "min_age, 10m)",
     .offset = F(min_age), .set_offset = F(min_age_set), .min = 0, .max = 0,
     .bad = "--min-age: expected a duration such as 10m, 1h or 90, got '%s'"},
    {"timeout", 't', CLI_DURATION, REAP, "S", "seconds from SIGTERM to SIGKILL (default 5, at most 3600)",
     .offset = F(timeout), .set_offset = F(timeout_set), .min = 0, .max = 3600,
     .bad = "--timeout: expected seconds (at most 3600), got '%s'"},

    /* What is watched. */
    {"mount", 0, CLI_PATH, MAIN, "PATH",
     "watch this mount (repeatable; default: tmpfs at\n"
     "/dev/shm and /run/shm)",
     .offset = F(mounts), .repeat = true, .absolute = true,
     .bad = "--mount: '%s' is not an absolute path"},
    {"mount", 0, CLI_PATH, CLEAN, "PATH",
     "only this mount (repeatable; default: the setting mounts,\n"
     "else /dev/shm, /run/shm)",
     .offset = F(mounts), .repeat = true, .absolute = true,
     .bad = "--mount needs an absolute path, got '%s'"},
    {"pid", 0, CLI_INT, MAIN, "PID",
     "watch the mount and cgroup namespaces of PID\n"
     "(e.g. a container's process, from the host)",
     PID_VALUE},
    {"all", 0, CLI_FLAG, MAIN, NULL,
     "the node view: every shm mount of every mount namespace\n"
     "(every container's /dev/shm), each with its container\n"
     "and its own memory budget",
     .offset = F(all)},
    {"orphan-min-age", 0, CLI_DURATION, MAIN, "DUR",
     "never call a segment younger than DUR an orphan\n"
     "(0s to 365d; default: the setting orphan_min_age, 60s)",
     .offset = F(orphan_min_age), .config_key = "orphan_min_age",
     .config_bad = "--orphan-min-age: %s"},
    {"orphan-min-age", 0, CLI_DURATION, CLEAN, "DUR",
     "never call a segment younger than DUR an orphan, 0s to\n"
     "365d (default: the setting orphan_min_age, 60s)",
     .offset = F(orphan_min_age), .config_key = "orphan_min_age",
     .config_bad = "--orphan-min-age: %s"},
    {"trust-pids", 0, CLI_FLAG, MAIN, NULL,
     "inside a container whose /dev/shm shmwatch cannot show\n"
     "private, still prove orphans by the pids in their names",
     .offset = F(trust_pids), .config_key = "trust_pids"},
    {"trust-pids", 0, CLI_FLAG, CLEAN, NULL,
     "inside a container, prove orphans by the pids in their\n"
     "names even when /dev/shm cannot be shown private to it",
     .offset = F(trust_pids), .config_key = "trust_pids"},

    /* replay */
    {"dir", 0, CLI_PATH, REPLAY, "DIR",
     "the recording (default /var/lib/shmwatch as root,\n"
     "else $XDG_STATE_HOME/shmwatch)",
     .offset = F(dir)},
    {"at", 0, CLI_STRING, REPLAY, "TIME",
     "open it at TIME: RFC 3339 (2026-12-05T03:12:07Z),\n"
     "HH:MM[:SS] today (local time) or -DUR ago (-10m);\n"
     "default: the newest snapshot",
     .offset = F(at)},

    /* Settings and looks. */
    {"config", 0, CLI_PATH, MAIN | REPLAY, "FILE", "configuration file (YAML)",
     .offset = F(config)},
    {"theme", 0, CLI_STRING, MAIN | REPLAY, "NAME|FILE", "colour theme for the dashboard",
     .offset = F(theme), .config_key = "theme", .config_bad = "command line: %s"},
    {"no-color", 0, CLI_FLAG, MAIN | REPLAY, NULL, "no colours (also when NO_COLOR is set)",
     .offset = F(no_color)},
    {"ascii", 0, CLI_FLAG, MAIN | REPLAY, NULL, "ASCII-only drawing and names",
     .offset = F(ascii), .config_key = "ascii"},
    {"read-only", 0, CLI_FLAG, MAIN, NULL, "disable every action key in the dashboard",
     .offset = F(read_only), .config_key = "read_only"},
    {"log", 0, CLI_PATH, MAIN | CLEAN | REAP, "FILE",
     "action log (default: the setting log_file, else\n"
     "$XDG_STATE_HOME/shmwatch/actions.log)",
     .offset = F(log_file), .config_key = "log_file", .config_bad = "command line: %s"},
    {"config", 0, CLI_PATH, CLEAN | REAP, "FILE",
     "configuration file (default: as for the dashboard)", .offset = F(config)},
    {"pid", 0, CLI_INT, CLEAN, "PID",
     "act inside the namespaces of process PID only (a\n"
     "container, from the host): its /dev/shm, each line naming\n"
     "it; refused if it exits before an unlink",
     PID_VALUE, .synopsis = "[--pid PID | --all]"},
    {"all", 0, CLI_FLAG, CLEAN, NULL,
     "every shm mount of the node view (every container's\n"
     "/dev/shm and the host's), each acted on inside its own\n"
     "container, the plan and each line naming it",
     .offset = F(all), .synopsis = ""},
    {"pid", 0, CLI_INT, REAP, "PID",
     "act inside the namespaces of process PID only (a container,\n"
     "from the host): its processes, each line naming it; refused\n"
     "if PID exits before a signal",
     PID_VALUE, .synopsis = "[--pid PID | --all]"},
    {"all", 0, CLI_FLAG, REAP, NULL,
     "every container of the node view and the host: each\n"
     "process acted on as part of its own container, the plan\n"
     "and each line naming it",
     .offset = F(all), .synopsis = ""},
    {"record", 0, CLI_PATH, MAIN, "[DIR]",
     "the dashboard records as shmwatch record does, into DIR\n"
     "(default as record's): a snapshot each scan, every event\n"
     "at once, within the settings record_max_size and\n"
     "record_max_age; refused while another recorder writes there",
     .offset = F(record_dir), .set_offset = F(record), .optional = true},
    {"demo", 0, CLI_FLAG, MAIN, NULL, "open the dashboard on a private demo scene\n"
     "(the dashboard only: not with a snapshot mode)",
     .offset = F(demo)},
    {"version", 0, CLI_CHOICE, MAIN, NULL, "print the version and exit", .offset = F(mode),
     .value = MODE_VERSION, .stop = true},

    /* plan */
    {"observe", 0, CLI_INT, PLAN, "PID",
     "take one batch's size from the running DataLoader\n"
     "whose main process is PID (seen in its own\n"
     "namespaces, as --pid does) instead of from shapes;\n"
     "--workers and --prefetch-factor default to what it\n"
     "shows",
     .offset = F(observe), .min = 1, .max = INT32_MAX, .bad = "--observe needs a pid, not '%s'"},
    {"batch-size", 'b', CLI_INT, PLAN, "N", "samples per batch (DataLoader batch_size)",
     .offset = F(batch_size), .set_offset = F(batch_size_set), .min = 1, .max = 1LL << 40,
     .bad = "--batch-size needs a whole number from 1 to 2^40, not '%s'"},
    {"sample-shape", 's', CLI_STRING, PLAN, "SHAPE",
     "the tensors of one sample, separated by commas,\n"
     "dimensions by 'x': 3x224x224,1 is an image and a\n"
     "label; 1:int64 gives one tensor its own dtype",
     .offset = F(sample_shape)},
    {"dtype", 'd', CLI_STRING, PLAN, "TYPE",
     "float32 (default), float64, float16, bfloat16,\n"
     "uint8, int8, int16, int32, int64, bool",
     .offset = F(dtype), .set_offset = F(dtype_set)},
    {"workers", 'w', CLI_INT, PLAN, "N", "DataLoader num_workers", .offset = F(workers),
     .set_offset = F(workers_set), .min = 0, .max = 1LL << 40,
     .bad = "--workers needs a whole number from 0 to 2^40, not '%s'"},
    {"prefetch-factor", 'p', CLI_INT, PLAN, "N", "batches each worker prepares ahead (default 2)",
     .offset = F(prefetch), .set_offset = F(prefetch_set), .min = 1, .max = 1LL << 40,
     .bad = "--prefetch-factor needs a whole number from 1 to 2^40, not '%s'"},
    {"memory", 'm', CLI_SIZE, PLAN, "SIZE", "the container's memory limit (docker -m), e.g. 8g",
     .offset = F(memory), .set_offset = F(memory_set), .min = 1,
     .bad = "--memory needs a size above 0 such as 512m or 8g, not '%s'"},
    {"shm-size", 0, CLI_SIZE, PLAN, "SIZE", "the container's /dev/shm size, e.g. 2g",
     .offset = F(shm_size), .set_offset = F(shm_size_set), .min = 1,
     .bad = "--shm-size needs a size above 0 such as 512m or 8g, not '%s'"},
    {"json", 0, CLI_FLAG, PLAN, NULL, "print the figures as JSON", .offset = F(json)},

    /* record */
    {"pid", 0, CLI_INT, RECORD, "PID",
     "record the mount and cgroup namespaces of PID (a\n"
     "container's process, from the host); the recorder ends,\n"
     "with status 1, when PID exits",
     PID_VALUE, .synopsis = "[--all | --pid PID]"},
    {"all", 0, CLI_FLAG, RECORD, NULL,
     "record the node view: every container's /dev/shm, the\n"
     "recorder living through containers that come and go",
     .offset = F(all), .synopsis = ""},
    {"dir", 0, CLI_PATH, RECORD, "DIR",
     "the store (default /var/lib/shmwatch as root, else\n"
     "$XDG_STATE_HOME/shmwatch)",
     .offset = F(dir)},
    {"interval", 0, CLI_DURATION, RECORD, "S",
     "seconds between snapshots (default 10, from 0.05 s to\n"
     "1 day); deaths and OOM kills are recorded at once, with a\n"
     "snapshot",
     .offset = F(interval), .set_offset = F(interval_set), .min = 0.05, .max = 86400,
     .bad = "--interval: '%s' is not a duration from 0.05 s to 1 day"},
    {"max-size", 0, CLI_SIZE, RECORD, "SIZE",
     "drop the oldest files past SIZE, at least 1m (default:\n"
     "the setting record_max_size, 256m)",
     .offset = F(max_size), .config_key = "record_max_size", .config_bad = "--max-size: %s"},
    {"max-age", 0, CLI_DURATION, RECORD, "DUR",
     "drop the files older than DUR, 1m to 3650d (default: the\n"
     "setting record_max_age, 7d)",
     .offset = F(max_age), .config_key = "record_max_age", .config_bad = "--max-age: %s"},
    {"config", 0, CLI_PATH, RECORD, "FILE",
     "configuration file (default: as for the dashboard)", .offset = F(config)},

    /* why */
    {"dir", 0, CLI_PATH, WHY, "DIR",
     "the recording (default /var/lib/shmwatch as root, else\n"
     "$XDG_STATE_HOME/shmwatch)",
     .offset = F(dir)},
    {"since", 0, CLI_DURATION, WHY, "DUR",
     "the window: the last DUR (default 1d, at least 1 s),\n"
     "e.g. 30m, 6h, 7d",
     .offset = F(since), .set_offset = F(since_set), .min = 1, .max = 0,
     .bad = "--since: expected a duration of at least 1 s such as 30m, 6h or 7d, got '%s'"},
    {"pid", 0, CLI_INT, WHY, "PID",
     "only the ends of process PID and of the DataLoader whose\n"
     "main process it was",
     PID_VALUE, .synopsis = "[--pid PID | --container NAME]"},
    {"container", 0, CLI_STRING, WHY, "NAME",
     "only the ends in the container of this name, id (12 hex\n"
     "digits or more) or pod; NAMESPACE/NAME: only that\n"
     "containerd namespace's",
     .offset = F(container), .synopsis = ""},
    {"json", 0, CLI_FLAG, WHY, NULL, "print the answer as JSON", .offset = F(json)},

    {"help", 'h', CLI_CHOICE, MAIN, NULL, "print this help and exit", .offset = F(mode),
     .value = MODE_HELP, .stop = true},
    {"help", 'h', CLI_CHOICE, CLEAN | REAP | PLAN | RECORD | REPLAY | WHY, NULL, "print this help",
     .offset = F(mode),
     .value = MODE_HELP, .stop = true},
};

const size_t cli_nopts = sizeof(cli_opts) / sizeof(cli_opts[0]);

static const char main_head[] =
    "Usage: shmwatch [options]            live dashboard of POSIX shared memory (/dev/shm)\n"
    "       shmwatch --once               one plain-text snapshot, then exit\n"
    "       shmwatch --json [--interval S --count N]   JSON snapshot(s), one per line\n"
    "       shmwatch --prometheus         one snapshot in Prometheus text format\n"
    "       shmwatch plan --batch-size N --sample-shape CxHxW[,...] --workers N [...]\n"
    "       shmwatch plan --observe PID [--workers N] [--prefetch-factor K] [...]\n";

static const char main_about[] =
    "\n"
    "Shows every shm mount's fill, every segment with its holders and state (in use,\n"
    "hidden = deleted but held, orphan, unheld), PyTorch DataLoader groups (main ->\n"
    "workers -> shm managers) and the memory budget (app + shm against the limit).\n"
    "\n"
    "Options:\n";

static const char main_tail[] =
    "\n"
    "Environment: NO_COLOR (no colours), XDG_CONFIG_HOME and XDG_STATE_HOME (the\n"
    "configuration, themes, action log and recording), SHMWATCH_MAPS=text|query\n"
    "(how mappings are read; unset: query), TERM, TERMINFO, TERMINFO_DIRS, TMPDIR\n"
    "(the terminal and its terminfo).\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure, 2 usage or configuration error,\n"
    "3 (clean, reap) something asked for was refused, 4 (why) something ended\n"
    "abnormally in the window.\n"
    "See shmwatch(1) and the guide in doc/guide.md.\n";

static const char clean_about[] =
    "\n"
    "Removes orphan shared-memory segments: named, held by nobody, and left by a\n"
    "creator that is gone (a killed PyTorch job's torch_* files), and older than\n"
    "orphan_min_age (a younger one may be a batch in flight). A tmpfs at /dev/shm\n"
    "in several pid namespaces (docker --ipc=host) has no orphans: the pid in a name\n"
    "is ambiguous there; remove its leftovers with --all-unheld. Right before each\n"
    "unlink it checks again that the name is the same regular file that was scanned,\n"
    "not written to since, that you own it (unless root) and that no process holds\n"
    "it open or mapped.\n"
    "Symbolic links, directories and FIFOs are never followed or removed, except a\n"
    "joblib memmapping folder of a dead creator: removed whole when every entry in\n"
    "it is a regular file of this file system that nobody holds.\n"
    "\n";

static const char clean_tail[] =
    "\n"
    "Settings come from the configuration file, as for the dashboard.\n"
    "Without --yes it asks on a terminal; without a terminal it only shows the plan.\n"
    "Exit status: 0 everything asked was done, 3 something was refused or failed,\n"
    "2 usage or configuration error, 1 the scan failed or the output could not be\n"
    "written (the actions told to happen still happen, and are logged; a log that\n"
    "cannot be written is said on stderr).\n";

static const char reap_about[] =
    "\n"
    "Ends what a crashed PyTorch job leaves running: orphaned DataLoader workers\n"
    "(their job's main process is gone) and stuck torch_shm_managers (no live\n"
    "client left). Each gets SIGTERM, then SIGKILL if it is still alive after the\n"
    "timeout. A zombie is already dead: its parent is named and sent SIGCHLD.\n"
    "Processes are checked to be the same ones that were scanned (pid and start\n"
    "time) and yours (unless you are root) right before every signal.\n"
    "\n";

static const char reap_tail[] =
    "\n"
    "Settings (log_file) come from the configuration file, as for the dashboard.\n"
    "Without --yes it asks on a terminal; without a terminal it only shows the plan.\n"
    "Exit status: 0 everything asked was done, 3 something was refused or could not\n"
    "be ended, 2 usage or configuration error, 1 the scan failed or the output could\n"
    "not be written (the actions told to happen still happen, and are logged; a log\n"
    "that cannot be written is said on stderr).\n";

static const char replay_about[] =
    "\n"
    "The dashboard on a recording of shmwatch record: every view of the live\n"
    "dashboard, the node view of an --all recording too, at the recorded time\n"
    "shown in the title. [ and ] step to the previous or next snapshot (one\n"
    "interval), { and } jump to the previous or next event (an exit, an OOM\n"
    "kill...), g goes to a time. Nothing of the running system is read or acted\n"
    "on: the action keys are off.\n"
    "\n";

static const char replay_tail[] =
    "\n"
    "Exit status: 0 when quit, 1 the recording cannot be shown (no such directory,\n"
    "nothing recorded, no snapshot at that time), 2 usage error.\n";

static const char plan_head[] =
    "Usage: shmwatch plan --batch-size N --sample-shape SHAPE[,SHAPE...] --workers N\n"
    "                     [--dtype TYPE] [--prefetch-factor N] [--memory SIZE]\n"
    "                     [--shm-size SIZE] [--json]\n"
    "       shmwatch plan --observe PID [--workers N] [--prefetch-factor N]\n"
    "                     [--memory SIZE] [--shm-size SIZE] [--json]\n";

static const char plan_about[] =
    "\n"
    "Computes how much shared memory (/dev/shm) a PyTorch DataLoader needs at its\n"
    "busiest, the --shm-size to give its container, and whether it fits the\n"
    "container's --memory (-m) and --shm-size.\n"
    "\n";

static const char plan_tail[] =
    "\n"
    "Sizes take k, m, g, t (powers of 1024, as docker reads them).\n"
    "Exit status: 0 computed (whether or not it fits), 2 bad input, 1 the output\n"
    "could not be written.\n";

static const char record_about[] =
    "\n"
    "Records /dev/shm over time into a store for shmwatch why and shmwatch replay:\n"
    "a snapshot (the --json object) each interval, every event at once (a process\n"
    "of the model ending, with its signal; an OOM kill; segments created and\n"
    "removed; a mount appearing or going; a fill crossing warn or critical), and\n"
    "another snapshot at once after a death or an OOM kill. Runs in the foreground\n"
    "(a tmux pane, a systemd unit, a DaemonSet's container) until stopped.\n"
    "Exit causes come from the kernel's process connector, which needs root\n"
    "(CAP_NET_ADMIN) in the initial namespaces; without it, a process gone between\n"
    "two snapshots is recorded with cause unknown, and the recorder says why.\n"
    "\n";

static const char record_tail[] =
    "\n"
    "The store keeps files of JSON lines by time (doc/recording.md), the oldest\n"
    "dropped past --max-size or --max-age; one recorder per directory. A scan that\n"
    "stalls (a file system that does not answer) is recorded as such at each\n"
    "interval, not as a snapshot, until it ends.\n"
    "SIGTERM, SIGINT or SIGHUP: the record being written is finished, the store\n"
    "closed, exit status 0. Exit status: 1 the store cannot be opened (another\n"
    "recorder holds it) or the watched --pid has exited, 2 usage or configuration\n"
    "error.\n";

static const char why_about[] =
    "\n"
    "Reads what `shmwatch record` wrote and explains each abnormal end in the window:\n"
    "a process killed by SIGBUS (the Bus error of a full /dev/shm), by the OOM\n"
    "killer or another signal, exiting with a status other than 0, or a DataLoader\n"
    "process gone for a cause the recorder could not see. For each: who (pid, role,\n"
    "its DataLoader main, container, pod), how and when; /dev/shm and the memory\n"
    "budget just before and at that moment; the diagnosis; what its job left behind\n"
    "on /dev/shm; and the least --shm-size and -m that fit what was recorded.\n"
    "A damaged file of the recording is named on stderr (file and byte offset) and\n"
    "the rest is used.\n"
    "\n";

static const char why_tail[] =
    "\n"
    "Exit status: 0 nothing ended abnormally in the window, 4 something did (the\n"
    "answer says what), 1 the recording could not be read or the output could not\n"
    "be written, 2 usage error.\n";

const struct cli_command cli_commands[CLI_NCMDS] = {
    [CLI_MAIN] = {"", .head = main_head, .about = main_about, .tail = main_tail, .col = 25,
                  .check = options_check},
    [CLI_CLEAN] = {"clean", .hint = true, .value_hint = true, .in_overview = true,
                   .about = clean_about, .tail = clean_tail, .col = 21, .short_col = true,
                   .check = options_check_act},
    [CLI_REAP] = {"reap", .hint = true, .value_hint = true, .in_overview = true,
                  .about = reap_about, .tail = reap_tail, .col = 19, .short_col = true,
                  .check = options_check_act},
    [CLI_PLAN] = {"plan", .hint = true, .head = plan_head, .about = plan_about, .tail = plan_tail,
                  .col = 28, .short_col = true},
    [CLI_RECORD] = {"record", .hint = true, .value_hint = true, .in_overview = true,
                    .about = record_about, .tail = record_tail, .col = 21, .short_col = true,
                    .check = options_check_act},
    [CLI_REPLAY] = {"replay", .hint = true, .value_hint = true, .in_overview = true,
                    .about = replay_about, .tail = replay_tail, .col = 25, .short_col = true,
                    .check = options_check_replay},
    [CLI_WHY] = {"why", .hint = true, .value_hint = true, .in_overview = true, .about = why_about,
                 .tail = why_tail, .col = 24, .short_col = true, .check = options_check_why},
};
