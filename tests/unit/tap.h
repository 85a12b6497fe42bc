/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal TAP producer for meson's 'tap' test protocol. */
#ifndef VWC_TAP_H
#define VWC_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) do {						\
	int _ok = !!(cond);						\
	tap_n++;							\
	if (_ok) {							\
		printf("ok %d - ", tap_n);				\
	} else {							\
		tap_failed++;						\
		printf("not ok %d - ", tap_n);				\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!_ok)							\
		printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
} while (0)

#define is_str(a, b, ...) do {						\
	const char *_a = (a), *_b = (b);				\
	ok(_a && _b && !strcmp(_a, _b), __VA_ARGS__);			\
	if (!(_a && _b && !strcmp(_a, _b)))				\
		printf("#   got '%s', expected '%s'\n", _a ? _a : "(null)", \
		       _b ? _b : "(null)");				\
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
