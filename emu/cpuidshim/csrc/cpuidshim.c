/*
 * cpuidshim: an LD_PRELOAD library that answers the CPUID instruction from
 * an emulated machine's /dev/cpu/N/cpuid file, so that tools which gate on
 * CPUID (x86_energy_perf_policy, turbostat) see the emulated machine's
 * features and model instead of the host's.
 *
 * Technique: CPUID faulting (arch_prctl(ARCH_SET_CPUID, 0); cpuinfo flag
 * cpuid_fault). Every CPUID in the process then raises SIGSEGV; the
 * handler reads the leaf from the file with the kernel cpuid driver's
 * convention (pread of 16 bytes at offset = ECX << 32 | EAX giving EAX, EBX,
 * ECX, EDX; arch/x86/kernel/cpuid.c), writes the registers and steps over
 * the 2-byte instruction. A leaf the file cannot answer (read error) is
 * answered by the real CPU. Faulting is reset by execve, so each process
 * that loads the library enables it again.
 *
 * Environment:
 *   HWPEMU_CPUID_DEV   the cpuid file to answer from, e.g. /dev/cpu/0/cpuid
 *                      inside `hwpemu run`. Unset: the library does nothing.
 *   HWPEMU_RLIMIT_NOFILE_CAP  if set, setrlimit(RLIMIT_NOFILE) requests that
 *                      exceed the hard limit settle for it (turbostat asks
 *                      for 32768 and exits when refused).
 *
 * Build: cc -shared -fPIC -O2 -o cpuidshim.so cpuidshim.c
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static int cpuid_fd = -1;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	unsigned char *ip = (unsigned char *)g[REG_RIP];
	uint32_t leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX], r[4];
	int saved = errno;

	(void)si;
	if (ip[0] != 0x0f || ip[1] != 0xa2) {
		/* Not CPUID: a real fault. Return to it with the default action. */
		signal(sig, SIG_DFL);
		return;
	}
	/*
	 * ECX is an input only for leaves with subleaves; callers of other
	 * leaves (turbostat's __cpuid(0, ...)) leave whatever was there. With
	 * bit 31 set the offset would be negative and pread refuses it, so
	 * such a subleaf is taken as 0: no leaf has 2^31 subleaves.
	 */
	if (sub & 0x80000000u)
		sub = 0;
	if (pread(cpuid_fd, r, sizeof r, (off_t)((uint64_t)sub << 32 | leaf)) != (ssize_t)sizeof r) {
		syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
		__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
		syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
	}
	g[REG_RAX] = r[0];
	g[REG_RBX] = r[1];
	g[REG_RCX] = r[2];
	g[REG_RDX] = r[3];
	g[REG_RIP] += 2;
	errno = saved;
}

int setrlimit(__rlimit_resource_t resource, const struct rlimit *rlim)
{
	struct rlimit cur, want = *rlim;
	int ret = prlimit(0, resource, rlim, NULL);

	if (ret == 0 || errno != EPERM || resource != RLIMIT_NOFILE ||
	    !getenv("HWPEMU_RLIMIT_NOFILE_CAP") || prlimit(0, resource, NULL, &cur) != 0)
		return ret;
	want.rlim_max = cur.rlim_max;
	if (want.rlim_cur > want.rlim_max)
		want.rlim_cur = want.rlim_max;
	return prlimit(0, resource, &want, NULL);
}

__attribute__((constructor)) static void cpuidshim_init(void)
{
	const char *dev = getenv("HWPEMU_CPUID_DEV");
	struct sigaction sa;

	if (!dev || !*dev)
		return;
	cpuid_fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (cpuid_fd < 0) {
		fprintf(stderr, "cpuidshim: %s: %s\n", dev, strerror(errno));
		exit(127);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
		fprintf(stderr, "cpuidshim: ARCH_SET_CPUID: %s (no cpuid_fault on this CPU?)\n",
			strerror(errno));
		exit(127);
	}
}
