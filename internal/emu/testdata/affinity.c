// SPDX-License-Identifier: Apache-2.0

/*
 * affinity.c: an LD_PRELOAD library whose sched_setaffinity always
 * succeeds. turbostat migrates to each CPU it reports; an emulated machine
 * has CPUs the host lacks, and the counters come from the emulated
 * /dev/cpu/N/msr whatever CPU turbostat runs on.
 * Build: cc -shared -fPIC -O2 -o affinity.so affinity.c
 */
#define _GNU_SOURCE
#include <sched.h>

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
	(void)pid;
	(void)size;
	(void)mask;
	return 0;
}
