/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: config.h - /etc/nvme-vwc-sync.conf
 *
 * One directive a line, '#' starts a comment, values with spaces in
 * double quotes:
 *
 *	device serial=S3EVNX0K123456 write-cache=write-back
 *	device model="KCD6XVUL3T20" write-cache=ignore
 *	device pci=c0a9:5419 write-cache=write-back
 *	irq-coalescing threshold=8 time=1
 *
 * write-cache is "auto" (follow the controller, the default),
 * "write-back" (always) or "ignore" (never touch). "write-through" is
 * refused: forcing it is the unsafe direction. The first matching device
 * line wins. A bad file is rejected whole, with its name and line.
 */
#ifndef VWC_CONFIG_H
#define VWC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

struct vwc_ctrl;

#define VWC_CONFIG_MAX_RULES	64

/** enum vwc_match - what a device line matches on */
enum vwc_match {
	VWC_MATCH_SERIAL,
	VWC_MATCH_MODEL,
	VWC_MATCH_PCI,
};

/**
 * struct vwc_rule - one device line
 * @match:	what it matches on
 * @value:	the serial, model or PCI ID it matches
 * @override:	what it asks for the devices it matches
 * @line:	its line in the file, for messages
 */
struct vwc_rule {
	enum vwc_match match;
	char value[64];
	enum vwc_override override;
	int line;
};

/**
 * struct vwc_config - a parsed configuration
 * @rules:		the device lines, in the file's order
 * @nr_rules:		how many
 * @irqc_enable:	interrupt coalescing asked for
 * @irqc_threshold:	its aggregation threshold, 0's based as in Set
 *			Features 08h
 * @irqc_time:		its aggregation time, in 100 us units
 */
struct vwc_config {
	struct vwc_rule rules[VWC_CONFIG_MAX_RULES];
	int nr_rules;
	bool irqc_enable;
	uint8_t irqc_threshold;
	uint8_t irqc_time;
};

/**
 * vwc_config_parse() - parse a configuration text (pure)
 * @text:	whole file contents
 * @file:	its name, for messages
 * @cfg:	result (zeroed first)
 * @err:	on failure "FILE:LINE: cause"
 * @errlen:	size of @err
 *
 * Return: 0, or -EINVAL with @err filled and @cfg empty.
 */
int vwc_config_parse(const char *text, const char *file,
		     struct vwc_config *cfg, char *err, size_t errlen);

/**
 * vwc_config_load() - read and parse a file
 * @file:	path; NULL means the default, which may be absent
 * @cfg:	result
 * @err:	on failure, the cause with the file name
 * @errlen:	size of @err
 *
 * Return: 0 (also when the default file does not exist) or a negative
 * errno.
 */
int vwc_config_load(const char *file, struct vwc_config *cfg, char *err,
		    size_t errlen);

/**
 * vwc_config_match() - the override for given identity (pure)
 * @cfg:	configuration, may be NULL
 * @serial:	controller serial number
 * @model:	model number
 * @pci_id:	"vvvv:dddd" or ""
 *
 * Return: the first matching rule's override, VWC_OVERRIDE_NONE if none.
 */
enum vwc_override vwc_config_match(const struct vwc_config *cfg,
				   const char *serial, const char *model,
				   const char *pci_id);

/**
 * vwc_config_override() - vwc_config_match() for a controller
 * @cfg:	configuration, may be NULL
 * @c:		controller
 *
 * Return: the override.
 */
enum vwc_override vwc_config_override(const struct vwc_config *cfg,
				      const struct vwc_ctrl *c);

#endif
