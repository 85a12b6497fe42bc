// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What keeps a rebind whole: process identities (procid.h), the records of
 * unbinds (unbound.h), the signals held over a section (sigdefer.h), the
 * sidecar's file. In a private run directory.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procid.h"
#include "sigdefer.h"
#include "tap.h"
#include "unbound.h"

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1++;
}

static void test_stat(void)
{
	unsigned long long start = 0;
	struct vwc_procid me, other;
	char state = 0;
	pid_t child;

	ok(!vwc_proc_stat_parse("42 (sh) S 1 42 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 98765 1000 200",
				&state, &start) && state == 'S' && start == 98765,
	   "stat: state and field 22");
	ok(!vwc_proc_stat_parse("7 (a) b) (c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123 1 1",
				&state, &start) && state == 'R' && start == 123,
	   "stat: a command name with spaces and parentheses");
	ok(vwc_proc_stat_parse("7 (a) R 1 2 3", &state, &start) == -EINVAL,
	   "stat: too few fields refused");
	ok(vwc_proc_stat_parse("garbage", &state, &start) == -EINVAL,
	   "stat: garbage refused");
	ok(!vwc_proc_ident(0, &me) && me.pid == getpid() && me.start > 0 &&
	   vwc_proc_alive(&me), "this process: identity, alive");
	other = me;
	other.start++;
	ok(!vwc_proc_alive(&other), "same pid, another start time: not it");
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	other.pid = child;
	ok(!vwc_proc_alive(&other), "an ended process: not alive");
	child = fork();
	if (child == 0)
		_exit(0);
	sleep(1);	/* a zombie until reaped */
	ok(vwc_proc_ident(child, &other) == -ESRCH, "a zombie: not alive");
	waitpid(child, NULL, 0);
}

static void test_records(void)
{
	struct vwc_unbound_rec r;

	ok(!vwc_unbound_parse("unbinder 1234 5678\nboot 0b2d-x\nids 1b36_0010_1af4_1100\n",
			      &r) && r.unbinder.pid == 1234 &&
	   r.unbinder.start == 5678 && !strcmp(r.boot, "0b2d-x") &&
	   !strcmp(r.ids, "1b36_0010_1af4_1100"), "record: parsed");
	ok(vwc_unbound_parse("unbinder 1234\n", &r) == -EINVAL,
	   "record: a half record refused");
	ok(vwc_unbound_parse("unbinder 0 5 boot b ids i", &r) == -EINVAL,
	   "record: pid 0 refused");
}

static void test_hold(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t now;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	vwc_sig_hold("the test section");
	vwc_sig_hold("an inner one");
	raise(SIGUSR1);
	ok(!got_usr1, "held: a signal in the section is not delivered");
	vwc_sig_release();
	ok(!got_usr1, "an inner section's end delivers nothing");
	sigprocmask(SIG_SETMASK, NULL, &now);
	ok(sigismember(&now, SIGTERM) && sigismember(&now, SIGINT) &&
	   sigismember(&now, SIGHUP) && sigismember(&now, SIGPIPE) &&
	   sigismember(&now, SIGTSTP) && sigismember(&now, SIGRTMIN),
	   "held: TERM, INT, HUP, PIPE, TSTP and the real-time signals blocked");
	vwc_sig_release();
	ok(got_usr1 == 1, "the outermost end delivers it, once");
	sigprocmask(SIG_SETMASK, NULL, &now);
	ok(!sigismember(&now, SIGTERM), "and unblocks what it blocked");
}

/* our own file's "exe" line */
static void own_exe(const char *dir, char *exe, size_t len)
{
	char path[600], buf[256], *e;
	FILE *f;
	size_t n;

	exe[0] = '\0';
	snprintf(path, sizeof(path), "%s/watch/%d", dir, getpid());
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	e = strstr(buf, "exe ");
	if (e)
		snprintf(exe, len, "%.*s", (int)strcspn(e + 4, "\n"), e + 4);
}

/*
 * A child with a file naming it as the sidecar does (its pid, its start
 * time, our program): is it taken for the sidecar? With @exec_other it
 * runs another program under the same pid and start time.
 */
static int forged_child(const char *dir, const char *exe, int exec_other)
{
	struct vwc_procid id = { 0 };
	char path[600];
	int st = -1, p[2];
	pid_t pid;
	FILE *f;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (exec_other) {
			dup2(p[0], 0);
			execl("/bin/sh", "sh", "-c", "read x", (char *)NULL);
			_exit(2);
		}
		if (read(p[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	/* the exec is done once /proc/PID/exe names another file (a fixed
	 * sleep was not enough on a loaded machine) */
	if (exec_other) {
		char link[64], self[600] = "", other[600] = "";
		int i;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
			self[0] = '\0';
		for (i = 0; i < 1000; i++) {
			ssize_t n = readlink(link, other, sizeof(other) - 1);

			other[n > 0 ? n : 0] = '\0';
			if (n > 0 && strcmp(other, self))
				break;
			usleep(10 * 1000);
		}
	}
	snprintf(path, sizeof(path), "%s/watch/%d", dir, (int)pid);
	f = fopen(path, "w");
	if (f && !vwc_proc_ident(pid, &id)) {
		fprintf(f, "pid %d\nstart %llu\nexe %s\n", (int)pid, id.start,
			exe);
		fclose(f);
		chmod(path, 0600);
		st = vwc_is_sidecar(pid);
	} else if (f) {
		fclose(f);
	}
	unlink(path);
	if (write(p[1], "x\n", 2) < 0)
		st = -1;
	close(p[1]);
	waitpid(pid, NULL, 0);
	return st;
}

static void test_sidecar(const char *dir)
{
	char path[600], exe[64];

	ok(!vwc_is_sidecar(getpid()), "no file: not the sidecar");
	ok(!vwc_sidecar_register(), "register");
	ok(vwc_is_sidecar(getpid()), "registered: the sidecar");
	ok(!vwc_is_sidecar(getppid()), "another process: not it");
	snprintf(path, sizeof(path), "%s/watch/%d", dir, getpid());
	chmod(path, 0666);
	ok(!vwc_is_sidecar(getpid()), "a file others may write: refused");
	chmod(path, 0600);
	ok(vwc_is_sidecar(getpid()), "back to 0600: accepted");
	own_exe(dir, exe, sizeof(exe));
	ok(exe[0] != '\0', "the file names the program (%s)", exe);
	ok(forged_child(dir, exe, 0) == 1,
	   "a file with a process's pid, start time and this program: taken (the control)");
	ok(forged_child(dir, exe, 1) == 0,
	   "the same for a process that runs another program: refused (/proc/PID/exe)");
	vwc_sidecar_unregister();
	ok(access(path, F_OK) && !vwc_is_sidecar(getpid()),
	   "unregistered: file gone, not the sidecar");
}

int main(void)
{
	char dir[] = "/tmp/vwc-rebind-XXXXXX", cmd[300];

	test_stat();
	test_records();
	test_hold();
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	setenv("NVME_VWC_SYNC_RUNDIR", dir, 1);
	ok(!vwc_unbound_pending(), "no record: nothing pending");
	test_sidecar(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ok(!system(cmd), "cleanup");
	return tap_done();
}
