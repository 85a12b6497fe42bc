/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A quirks rebind (the PCI dynamic ID for Write Zeroes, then unbind and
 * bind) that a signal or a SIGKILL may end at any step.
 *
 * Processes and the code they stand for:
 *   quirks()    `nvme-vwc-sync quirks` (udev's rule, an admin, restore's
 *               restore_dev() likewise): dynid.c vwc_dynid_qlock_take(),
 *               quirks.c apply_dev() -> vwc_dynid_add(),
 *               vwc_dynid_rebind(): vwc_dynid_bind("unbind"), then
 *               vwc_dynid_bind_retry() (binds VWC_BIND_TRIES apart; here
 *               the first may fail, the second takes),
 *               vwc_dynid_qlock_release()
 *   signals()   a SIGTERM, SIGINT, SIGHUP or SIGPIPE (Ctrl-C in apt-get,
 *               an ssh hangup, `quirks | head -1`, systemd stopping a
 *               unit): it may come at any step; a write blocked in the
 *               kernel (the unbind) takes it when it returns
 *   sigkill()   udevd's SIGKILL on an event timeout: at any step, never
 *               caught; the flock on quirks.lock goes with the process
 *   guard()     INTENDED DESIGN (another change designs it, not on main):
 *               quirks writes a record naming itself before the unbind
 *               and removes it after the bind; a guard that outlives it
 *               binds the function of a record whose unbinder is gone,
 *               and drops the record
 *
 * Designs (spin -D...):
 *   BUG_SIGNAL  main today: no handler, the default action ends the
 *               process after the unbind, before the bind; no record, no
 *               guard
 *   NOGUARD     the catchable signals held off from the unbind to the
 *               bind (blocked, then acted on), but no record and no
 *               guard: a SIGKILL still leaves the function unbound
 *   (default)   both: the signals held off, and the record and guard
 *   NOKILL      no SIGKILL (to show the catchable signals' case alone)
 *
 * Property (pan -a -f -N p_bind): every unbind is followed by a bind:
 * [] (!bound -> <> bound), with weak fairness (the guard runs once its
 * process is enabled for good).
 *
 * Left out: a bind the kernel refuses every time (reported as LEFT
 * UNBOUND: no design of ours binds then), the dynamic ID's own records,
 * twins kept out with driver_override, the in-use checks before the
 * unbind (they refuse, nothing is unbound), a SIGKILL of the guard
 * itself, and how the guard learns the unbinder is gone (its flock or
 * pid, per the design).
 */

bool bound = 1;		/* the PCI function bound to nvme */
bool qlock;		/* vwc_dynid_qlock_take(): flock on quirks.lock */
bool alive = 1;		/* the quirks process */
bool rec;		/* the record naming the unbinder (intended design) */
bool sig;		/* a catchable signal came */
bool killed;		/* SIGKILL came */
bool held;		/* catchable signals held off (the rebind's window) */

proctype quirks()
{
	{
		atomic { !qlock -> qlock = 1 };	/* vwc_dynid_qlock_take() */
		skip;				/* vwc_dynid_add() */
#ifndef BUG_SIGNAL
		held = 1;			/* from here to the bind: held off */
#ifndef NOGUARD
		rec = 1;			/* the record, before the unbind */
#endif
#endif
		bound = 0;			/* vwc_dynid_bind("unbind") */
		/* vwc_dynid_bind_retry(): the first bind may fail */
		if
		:: bound = 1
		:: skip
		fi;
		if
		:: !bound -> bound = 1
		:: else
		fi;
#ifndef BUG_SIGNAL
		rec = 0;			/* bound: the record goes */
		held = 0;			/* a signal held off acts now */
#endif
		atomic { qlock = 0; alive = 0 }
	} unless {
		atomic {
			(killed || (sig && !held)) ->
			if
			:: !bound && !killed ->
				printf("MODEL: BUG-c a signal between unbind and bind ends quirks: left unbound\n")
			:: !bound && killed ->
				printf("MODEL: SIGKILL between unbind and bind\n")
			:: else
			fi;
			qlock = 0;	/* the flock goes with the process */
			alive = 0
		}
	}
}

proctype signals()
{
	sig = 1
}

proctype sigkill()
{
	killed = 1
}

proctype guard()
{
end:	atomic { rec && !alive };
	if
	:: !bound -> bound = 1	/* echo ADDR > /sys/bus/pci/drivers/nvme/bind */
	:: else
	fi;
	rec = 0
}

init {
	atomic {
		run quirks();
		run signals();
#ifndef NOKILL
		run sigkill();
#endif
#if !defined(BUG_SIGNAL) && !defined(NOGUARD)
		run guard()
#endif
	}
}

ltl p_bind { [] (!bound -> <> bound) }
