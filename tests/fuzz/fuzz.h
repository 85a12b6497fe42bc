/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared helpers for the libFuzzer harnesses (tests/fuzz/README.md). */
#ifndef VWC_FUZZ_H
#define VWC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The input as a NUL-terminated string (embedded NULs end it early). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * Split the input at NUL bytes into up to @max strings (missing ones are
 * ""); free with fuzz_free_parts().
 */
static inline int fuzz_parts(const uint8_t *data, size_t size, char **part,
			     int max)
{
	size_t off = 0;
	int i;

	for (i = 0; i < max; i++) {
		const uint8_t *z = off < size ?
			memchr(data + off, 0, size - off) : NULL;
		size_t n = off >= size ? 0 : z ? (size_t)(z - data) - off :
			   size - off;

		part[i] = fuzz_str(data + (off < size ? off : 0), n);
		off += n + 1;
	}
	return max;
}

static inline void fuzz_free_parts(char **part, int max)
{
	int i;

	for (i = 0; i < max; i++)
		free(part[i]);
}

/* Abort (a crash libFuzzer reports) when an invariant does not hold. */
#define fuzz_assert(cond) do { if (!(cond)) abort(); } while (0)

#endif
