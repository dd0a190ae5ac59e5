// SPDX-License-Identifier: Apache-2.0

/*
 * Prints CPUID leaf[.subleaf] for each argument as "leaf.sub: eax ebx ecx
 * edx". The argument "ud2" executes UD2 and "segv" writes through a null
 * pointer: real faults, which must keep their default action.
 */
#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *dot = strchr(argv[i], '.');
		unsigned leaf = strtoul(argv[i], NULL, 0), sub = dot ? strtoul(dot + 1, NULL, 0) : 0;
		unsigned a, b, c, d;
		int *volatile null = NULL;

		fflush(stdout);
		if (strcmp(argv[i], "ud2") == 0)
			__builtin_trap();
		if (strcmp(argv[i], "segv") == 0)
			*null = 0;
		__cpuid_count(leaf, sub, a, b, c, d);
		printf("%#x.%u: %#x %#x %#x %#x\n", leaf, sub, a, b, c, d);
	}
	return 0;
}
