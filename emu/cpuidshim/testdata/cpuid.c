/* Prints CPUID leaf[.subleaf] for each argument as "leaf.sub: eax ebx ecx edx". */
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
		__cpuid_count(leaf, sub, a, b, c, d);
		printf("%#x.%u: %#x %#x %#x %#x\n", leaf, sub, a, b, c, d);
	}
	return 0;
}
