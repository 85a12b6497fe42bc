/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: procid.h - which process is which, soundly
 *
 * A pid alone names a process only while it lives: once it has ended the
 * number may be given to another. A process is named here by its pid and
 * its start time (field 22 of /proc/PID/stat, clock ticks since boot),
 * which a later process of the same pid cannot share. The rebind records
 * (unbound.h) name their unbinder so; the sidecar leaves a file naming
 * itself, its start time and its program (the device and inode of
 * /proc/self/exe) in the root-only run directory, so that the in-use
 * checks before a rebind (inuse.h) can leave its own descriptor of the
 * controller out, and nothing else: a process that only has the sidecar's
 * name, a reused pid, or another program exec()ed under the sidecar's pid
 * is not it.
 */
#ifndef VWC_PROCID_H
#define VWC_PROCID_H

#include <stdbool.h>
#include <stddef.h>

/**
 * struct vwc_procid - one process, for as long as it lives
 * @pid:	its pid
 * @start:	its start time, clock ticks after boot
 */
struct vwc_procid {
	int pid;
	unsigned long long start;
};

/**
 * vwc_proc_stat_parse() - state and start time from a /proc/PID/stat line
 *			   (pure)
 * @stat:	the file's text ("1234 (comm) S 1 ... starttime ...")
 * @state:	on 0, the state letter (R, S, D, Z, X, ...)
 * @start:	on 0, field 22, the start time
 *
 * The command name may hold spaces and parentheses: fields are counted
 * from its last ')'.
 *
 * Return: 0, or -EINVAL.
 */
int vwc_proc_stat_parse(const char *stat, char *state,
			unsigned long long *start);

/**
 * vwc_proc_ident() - a live process's identity
 * @pid:	its pid (0: this process)
 * @id:		on 0, the identity
 *
 * Return: 0, or a negative errno (-ESRCH: no such process, or a zombie).
 */
int vwc_proc_ident(int pid, struct vwc_procid *id);

/**
 * vwc_proc_alive() - is the process @id names still running
 * @id:	identity from vwc_proc_ident() (or a record)
 *
 * Return: true while a process of that pid and that start time exists and
 * is not a zombie.
 */
bool vwc_proc_alive(const struct vwc_procid *id);

/**
 * vwc_sidecar_register() - this process is the sidecar: say so
 *
 * Writes <rundir>/watch/<pid> (pid, start time, program), and removes the
 * files of sidecars that have ended.
 *
 * Return: 0, or a negative errno (logged).
 */
int vwc_sidecar_register(void);

/**
 * vwc_sidecar_unregister() - remove what vwc_sidecar_register() wrote
 */
void vwc_sidecar_unregister(void);

/**
 * vwc_is_sidecar() - is @pid a running sidecar of this tool
 * @pid:	a pid
 *
 * True only when <rundir>/watch/@pid exists, is this user's, and names
 * the process now running under @pid: the same start time and the same
 * program (/proc/@pid/exe's device and inode).
 *
 * Return: true if it is.
 */
bool vwc_is_sidecar(int pid);

#endif
