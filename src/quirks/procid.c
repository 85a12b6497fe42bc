// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Process identities (procid.h): pid and start time; the sidecar's own
 * file in the run directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk.h"
#include "log.h"
#include "procid.h"

int vwc_proc_stat_parse(const char *stat, char *state,
			unsigned long long *start)
{
	const char *p = strrchr(stat, ')');
	int i;

	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -EINVAL;
	*state = p[2];
	/* field 3 is the state; the start time is field 22 */
	p += 3;
	for (i = 4; i < 22; i++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	return sscanf(p, " %llu", start) == 1 ? 0 : -EINVAL;
}

/* state and start time of @pid; -ESRCH when there is no such process */
static int proc_stat(int pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ESRCH;
	buf[n] = '\0';
	return vwc_proc_stat_parse(buf, state, start);
}

int vwc_proc_ident(int pid, struct vwc_procid *id)
{
	char state;
	int r;

	if (!pid)
		pid = getpid();
	r = proc_stat(pid, &state, &id->start);
	if (r)
		return r;
	id->pid = pid;
	return state == 'Z' || state == 'X' ? -ESRCH : 0;
}

bool vwc_proc_alive(const struct vwc_procid *id)
{
	struct vwc_procid now;

	return id->pid > 0 && !vwc_proc_ident(id->pid, &now) &&
	       now.start == id->start;
}

/* ---- the sidecar's file: <rundir>/watch/<pid> ---- */

static void sidecar_path(int pid, char *path, size_t len)
{
	if (pid)
		snprintf(path, len, "%s/watch/%d", vwc_rundir(), pid);
	else
		snprintf(path, len, "%s/watch", vwc_rundir());
}

/* the device and inode of @pid's program (/proc/PID/exe) */
static int exe_of(int pid, char *buf, size_t len)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return -errno;
	snprintf(buf, len, "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	return 0;
}

/* the file's pid, start time and program: 0, or -EINVAL */
static int sidecar_read(const char *path, struct vwc_procid *id, char *exe,
			size_t len)
{
	char buf[256], fmt[32];
	struct stat st;
	FILE *f;
	int n;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* root's own, in a root-only directory: nobody else wrote it */
	if (fstat(fileno(f), &st) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		fclose(f);
		return -EPERM;
	}
	n = (int)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(fmt, sizeof(fmt), "pid %%d start %%llu exe %%%zus", len - 1);
	return sscanf(buf, fmt, &id->pid, &id->start, exe) == 3 ? 0 : -EINVAL;
}

/* the files of sidecars that ended (a SIGKILL leaves its file behind) */
static void sidecar_sweep(void)
{
	char dir[512], path[800], exe[64];
	struct vwc_procid id;
	struct dirent *de;
	DIR *d;

	sidecar_path(0, dir, sizeof(dir));
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (sidecar_read(path, &id, exe, sizeof(exe)) ||
		    !vwc_proc_alive(&id))
			unlink(path);
	}
	if (d)
		closedir(d);
}

int vwc_sidecar_register(void)
{
	char dir[512], path[600], tmp[620], exe[64];
	struct vwc_procid me;
	FILE *f;
	int r;

	r = vwc_proc_ident(0, &me);
	if (!r)
		r = exe_of(me.pid, exe, sizeof(exe));
	sidecar_path(0, dir, sizeof(dir));
	if (!r)
		r = vwc_mkdir_p(dir);
	if (r) {
		vwc_warn("watch: cannot name itself in %s: %s; a quirks rebind takes its descriptor of a controller for a user's",
			 dir, strerror(-r));
		return r;
	}
	sidecar_sweep();
	sidecar_path(me.pid, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	r = f ? 0 : -errno;
	if (!r && fprintf(f, "pid %d\nstart %llu\nexe %s\n", me.pid,
			  me.start, exe) < 0)
		r = -EIO;
	if (f && fclose(f) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r) {
		if (f)
			unlink(tmp);
		vwc_warn("watch: cannot write %s: %s; a quirks rebind takes its descriptor of a controller for a user's",
			 path, strerror(-r));
		return r;
	}
	return 0;
}

void vwc_sidecar_unregister(void)
{
	char path[600];

	sidecar_path(getpid(), path, sizeof(path));
	unlink(path);
}

bool vwc_is_sidecar(int pid)
{
	char path[600], exe[64], now[64];
	struct vwc_procid id;

	sidecar_path(pid, path, sizeof(path));
	return pid > 0 && !sidecar_read(path, &id, exe, sizeof(exe)) &&
	       id.pid == pid && vwc_proc_alive(&id) &&
	       !exe_of(pid, now, sizeof(now)) && !strcmp(exe, now);
}
