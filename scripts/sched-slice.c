/* Runs a command with a custom EEVDF time slice (Linux 6.12+): sched_setattr with SCHED_OTHER
 * and sched_runtime = the slice, which every thread the command starts inherits
 * (/proc/PID/task/TID/sched shows it as se.slice). A diagnostic for scripts/load.sh's latency
 * tail (docs/performance.md "HTTP"):
 *
 *     cc -O2 -o /tmp/sched-slice scripts/sched-slice.c
 *     /tmp/sched-slice 100000 .build/release/viewportd ...      # a 100 us slice
 *
 * glibc has no wrapper for sched_setattr and util-linux's chrt sets a runtime only for
 * SCHED_DEADLINE before 2.41, hence this. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sched_attr_v1 {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
    uint32_t util_min, util_max;
};

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s SLICE_NS COMMAND [ARG...]\n", argv[0]);
        return 2;
    }
    char *end = NULL;
    unsigned long long slice = strtoull(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0') {
        fprintf(stderr, "%s: SLICE_NS must be a number of nanoseconds, not '%s'\n", argv[0], argv[1]);
        return 2;
    }
    struct sched_attr_v1 attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.policy = 0; /* SCHED_OTHER */
    attr.runtime = slice;
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
        perror("sched_setattr");
        return 1;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
