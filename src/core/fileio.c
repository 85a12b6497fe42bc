// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

/* @n bytes read into @buf: terminated, trailing white space dropped */
static void end_text(char *buf, size_t n)
{
	buf[n] = '\0';
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
}

int vwc_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	end_text(buf, n);
	return 0;
}

int vwc_read_attr(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, r = 0;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (len < 2)
		return -EINVAL;	/* no room for a byte: no answer, not "" */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		r = -errno;
		n = 0;
	}
	close(fd);
	end_text(buf, (size_t)n);
	return r;
}

int vwc_write_str(const char *path, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;
	int fd, r;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, s, n);
	r = w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

long vwc_read_long(const char *path)
{
	char buf[32];

	if (vwc_read_line(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	return strtol(buf, NULL, 10);
}

