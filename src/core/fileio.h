/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: fileio.h - small sysfs and procfs file helpers
 */
#ifndef VWC_FILEIO_H
#define VWC_FILEIO_H

#include <stddef.h>

/**
 * vwc_read_line() - read a small file, trailing white space removed
 * @path:	file
 * @buf:	on return, its text ("" on error)
 * @len:	size of @buf
 *
 * Return: 0, or a negative errno.
 */
int vwc_read_line(const char *path, char *buf, size_t len);

/**
 * vwc_read_attr() - read a sysfs attribute, trailing white space removed
 * @path:	file
 * @buf:	on return, its text ("" on error)
 * @len:	size of @buf, at least 2 (else -EINVAL)
 *
 * One read(): sysfs gives an attribute's whole text to the first one, and
 * so does a small regular file. Three system calls, where
 * vwc_read_line()'s stdio makes five (an fstat() and a read() that finds
 * the end): at fabrics scale, thousands of namespaces' attributes.
 * Not for procfs files that may need more than one read(), nor where an
 * open file whose read fails must count as read (vwc_read_line() then
 * gives 0 and "").
 *
 * Return: 0, or a negative errno.
 */
int vwc_read_attr(const char *path, char *buf, size_t len);

/**
 * vwc_write_str() - write @s to @path in one write() (sysfs attributes)
 * @path:	file
 * @s:		text
 *
 * Return: 0, or a negative errno (-EIO for a short write).
 */
int vwc_write_str(const char *path, const char *s);

/**
 * vwc_read_long() - a decimal number from a file
 * @path:	file
 *
 * Return: the number, or -1 when the file cannot be read or is empty.
 */
long vwc_read_long(const char *path);

#endif
