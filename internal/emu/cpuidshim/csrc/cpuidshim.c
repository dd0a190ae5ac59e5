// SPDX-License-Identifier: Apache-2.0

/*
 * cpuidshim: an LD_PRELOAD library that answers the CPUID instruction from
 * an emulated machine's /dev/cpu/N/cpuid file, so that tools which gate on
 * CPUID (x86_energy_perf_policy, turbostat) see the emulated machine's
 * features and model instead of the host's.
 *
 * Two paths, chosen before main runs:
 *
 * fault: CPUID faulting (arch_prctl(ARCH_SET_CPUID, 0); cpuinfo flag
 *   cpuid_fault, Intel only). Every CPUID in the process then raises
 *   SIGSEGV; the handler answers it and steps over the 2-byte instruction.
 *   Any other SIGSEGV gets its default action. Faulting is reset by execve,
 *   so each process that loads the library enables it again.
 *
 * patch: where the kernel refuses faulting (ENODEV: AMD, or a CPU without
 *   the feature), the program's own CPUID instructions (0F A2), listed in
 *   HWPEMU_CPUID_SITES by their linked addresses (found by disassembly, in
 *   Go: cpuidshim.Sites), are rewritten into UD2 (0F 0B, the same length):
 *   the text page is made writable, patched and given back its segment's
 *   protection. The SIGILL handler answers a UD2 at a patched address and
 *   steps over it; any other SIGILL gets its default action. A listed
 *   address that is not 0F A2 in an executable segment of the program
 *   stops it (exit 127): the list was made for another file. CPUID in
 *   other objects (libc, the dynamic loader) reaches the real CPU.
 *
 * The answer is read with the kernel cpuid driver's convention (pread of 16
 * bytes at offset = ECX << 32 | EAX giving EAX, EBX, ECX, EDX;
 * arch/x86/kernel/cpuid.c). A leaf the file cannot answer (read error) is
 * answered by the real CPU.
 *
 * Environment:
 *   HWPEMU_CPUID_DEV   the cpuid file to answer from, e.g. /dev/cpu/0/cpuid
 *                      inside `hwpemu run`; a "%d" in it stands for the CPU
 *                      the thread runs on (sched_getcpu), e.g.
 *                      /dev/cpu/%d/cpuid. Unset: the library does nothing.
 *   HWPEMU_CPUID_MODE  fault or patch forces that path (exit 127 where
 *                      faulting is refused); unset: fault, else patch.
 *   HWPEMU_CPUID_SITES PROG=ADDR,ADDR,...[;PROG=...]: the CPUID
 *                      instructions (hex linked addresses) of each program,
 *                      PROG as /proc/self/exe names it. A program not
 *                      listed is left unpatched.
 *   HWPEMU_RLIMIT_NOFILE_CAP  if set, setrlimit(RLIMIT_NOFILE) requests that
 *                      exceed the hard limit settle for it (turbostat asks
 *                      for 32768 and exits when refused).
 *
 * Build: cc -shared -fPIC -O2 -o cpuidshim.so cpuidshim.c
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_CPUS 8192

static const char *dev;     /* HWPEMU_CPUID_DEV */
static int per_cpu;         /* dev holds "%d" */
static int fixed_fd = -1;   /* dev's descriptor when not per CPU */
static int cpu_fd[MAX_CPUS]; /* per CPU: descriptor + 1, 0 unopened, -1 failed */
static int faulting;        /* the fault path is in use */
static uintptr_t *sites;    /* patched addresses, sorted */
static size_t nsites;

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "cpuidshim: %s: %s\n", what, detail);
	exit(127);
}

/* dev_path writes dev with "%d" replaced by cpu into buf (signal-safe). */
static void dev_path(char *buf, size_t n, int cpu)
{
	const char *pct = strstr(dev, "%d");
	char num[16];
	int len = 0;
	size_t at = pct - dev;

	do
		num[len++] = '0' + cpu % 10;
	while ((cpu /= 10) > 0);
	if (at + len + strlen(pct + 2) + 1 > n) {
		buf[0] = 0;
		return;
	}
	memcpy(buf, dev, at);
	while (len > 0)
		buf[at++] = num[--len];
	strcpy(buf + at, pct + 2);
}

/* cpuid_file returns the descriptor to answer from, -1 if none. */
static int cpuid_file(void)
{
	char path[PATH_MAX];
	int cpu, fd;

	if (!per_cpu)
		return fixed_fd;
	cpu = sched_getcpu();
	if (cpu < 0 || cpu >= MAX_CPUS)
		return -1;
	if (cpu_fd[cpu] == 0) {
		dev_path(path, sizeof path, cpu);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		cpu_fd[cpu] = fd < 0 ? -1 : fd + 1;
	}
	return cpu_fd[cpu] > 0 ? cpu_fd[cpu] - 1 : -1;
}

/* answer fills r with CPUID leaf.sub from the file, else the real CPU. */
static void answer(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	int fd = cpuid_file();

	/*
	 * ECX is an input only for leaves with subleaves; callers of other
	 * leaves (turbostat's __cpuid(0, ...)) leave whatever was there. With
	 * bit 31 set the offset would be negative and pread refuses it, so
	 * such a subleaf is taken as 0: no leaf has 2^31 subleaves.
	 */
	if (sub & 0x80000000u)
		sub = 0;
	if (fd >= 0 && pread(fd, r, 16, (off_t)((uint64_t)sub << 32 | leaf)) == 16)
		return;
	if (faulting)
		syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
	if (faulting)
		syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
}

/* emulate answers the instruction at the interrupted RIP and steps over it. */
static void emulate(greg_t *g)
{
	uint32_t r[4];
	int saved = errno;

	answer((uint32_t)g[REG_RAX], (uint32_t)g[REG_RCX], r);
	g[REG_RAX] = r[0];
	g[REG_RBX] = r[1];
	g[REG_RCX] = r[2];
	g[REG_RDX] = r[3];
	g[REG_RIP] += 2;
	errno = saved;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	unsigned char *ip = (unsigned char *)g[REG_RIP];

	/* CPUID under faulting is a general protection fault: SI_KERNEL. */
	if (si->si_code != SI_KERNEL || ip[0] != 0x0f || ip[1] != 0xa2) {
		/* Not CPUID: a real fault. Return to it with the default action. */
		signal(sig, SIG_DFL);
		return;
	}
	emulate(g);
}

static int patched(uintptr_t ip)
{
	size_t lo = 0, hi = nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sites[mid] == ip)
			return 1;
		if (sites[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void on_ill(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;

	if (si->si_code != ILL_ILLOPN || !patched((uintptr_t)g[REG_RIP])) {
		/* Not a patched CPUID: a real one. Default action on return. */
		signal(sig, SIG_DFL);
		return;
	}
	emulate(g);
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

static void handle(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(sig, &sa, NULL);
}

/* own_sites returns this program's entry of HWPEMU_CPUID_SITES, or NULL. */
static const char *own_sites(void)
{
	const char *list = getenv("HWPEMU_CPUID_SITES");
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	size_t len;

	if (!list || n <= 0)
		return NULL;
	exe[n] = 0;
	len = n;
	for (const char *p = list; *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : "") {
		if (strncmp(p, exe, len) == 0 && p[len] == '=')
			return p + len + 1;
	}
	return NULL;
}

struct program {
	ElfW(Addr) bias;
	const ElfW(Phdr) *phdr;
	ElfW(Half) phnum;
};

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct program *p = data;

	(void)size;
	p->bias = info->dlpi_addr;
	p->phdr = info->dlpi_phdr;
	p->phnum = info->dlpi_phnum;
	return 1; /* the main program comes first */
}

/* segment_prot returns the protection of the executable segment holding
 * the two bytes at vaddr, or -1. */
static int segment_prot(const struct program *p, uintptr_t vaddr)
{
	for (int i = 0; i < p->phnum; i++) {
		const ElfW(Phdr) *ph = &p->phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    vaddr < ph->p_vaddr || vaddr + 2 > ph->p_vaddr + ph->p_filesz)
			continue;
		return (ph->p_flags & PF_R ? PROT_READ : 0) | PROT_EXEC |
		       (ph->p_flags & PF_W ? PROT_WRITE : 0);
	}
	return -1;
}

static int by_addr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* patch_site rewrites the CPUID at vaddr into UD2. */
static void patch_site(const struct program *p, uintptr_t vaddr)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	unsigned char *ip = (unsigned char *)(p->bias + vaddr);
	uintptr_t page = (uintptr_t)(ip + 1) & ~(uintptr_t)(pagesz - 1);
	int prot = segment_prot(p, vaddr);
	char what[64];

	snprintf(what, sizeof what, "CPUID site %#lx", (unsigned long)vaddr);
	if (prot < 0 || ip[0] != 0x0f || ip[1] != 0xa2)
		die(what, "not a CPUID instruction in an executable segment of this program");
	if (mprotect((void *)page, pagesz, PROT_READ | PROT_WRITE) != 0)
		die(what, strerror(errno));
	ip[1] = 0x0b;
	if (mprotect((void *)page, pagesz, prot) != 0)
		die(what, strerror(errno));
}

/* start_patching rewrites this program's listed CPUID instructions. */
static void start_patching(void)
{
	const char *list = own_sites();
	struct program prog;
	size_t cap = 0;
	char *end;

	if (!list)
		return;
	dl_iterate_phdr(first_object, &prog);
	for (const char *p = list; *p && *p != ';'; p = *end == ',' ? end + 1 : end) {
		uintptr_t vaddr = strtoull(p, &end, 16);
		if (end == p)
			die("HWPEMU_CPUID_SITES", "malformed address list");
		if (nsites == cap) {
			cap = cap ? 2 * cap : 64;
			sites = realloc(sites, cap * sizeof *sites);
			if (!sites)
				die("HWPEMU_CPUID_SITES", strerror(ENOMEM));
		}
		patch_site(&prog, vaddr);
		sites[nsites++] = prog.bias + vaddr;
	}
	qsort(sites, nsites, sizeof *sites, by_addr);
	handle(SIGILL, on_ill);
}

/* open_dev opens the cpuid file (this CPU's, when per CPU) or exits. */
static void open_dev(void)
{
	char path[PATH_MAX];
	int fd;

	per_cpu = strstr(dev, "%d") != NULL;
	if (!per_cpu) {
		fixed_fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (fixed_fd < 0)
			die(dev, strerror(errno));
		return;
	}
	fd = cpuid_file();
	if (fd < 0) {
		dev_path(path, sizeof path, sched_getcpu());
		die(path, "cannot open");
	}
}

__attribute__((constructor)) static void cpuidshim_init(void)
{
	const char *mode = getenv("HWPEMU_CPUID_MODE");

	dev = getenv("HWPEMU_CPUID_DEV");
	if (!dev || !*dev)
		return;
	if (!mode)
		mode = "";
	if (*mode && strcmp(mode, "fault") != 0 && strcmp(mode, "patch") != 0)
		die("HWPEMU_CPUID_MODE", "want fault or patch");
	open_dev();
	if (strcmp(mode, "patch") != 0) {
		handle(SIGSEGV, on_segv);
		if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) == 0) {
			faulting = 1;
			return;
		}
		if (*mode)
			die("ARCH_SET_CPUID", errno == ENODEV ?
			    "no CPUID faulting on this CPU (HWPEMU_CPUID_MODE=fault)" : strerror(errno));
		signal(SIGSEGV, SIG_DFL);
	}
	start_patching();
}
