/* SPDX-License-Identifier: GPL-2.0-or-later */
/**
 * DOC: topo.h - NVMe controllers and namespaces of this host
 *
 * Discovery from sysfs: controllers (class nvme), namespaces (block
 * disks), hidden multipath path nodes (nvmeXcYnZ) and which controllers
 * reach each namespace; all of them, or those of some NVM subsystems.
 * resolve.h turns what an admin types into one of them.
 */
#ifndef VWC_TOPO_H
#define VWC_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devname.h"
#include "policy.h"

struct udev;

#define VWC_NAME_LEN	32
/* PATH_MAX: a sysfs path through a deep PCI or fabrics tree is never cut */
#define VWC_PATH_LEN	4096
/* an NVMe Qualified Name and its NUL (NVMF_NQN_SIZE is 223) */
#define VWC_NQN_LEN	224

/** enum vwc_action - what happened to a namespace */
enum vwc_action {
	VWC_ACT_NONE = 0,	/* not looked at */
	VWC_ACT_UNCHANGED,
	VWC_ACT_CHANGED,
	VWC_ACT_WOULD_CHANGE,	/* --dry-run */
	VWC_ACT_SKIPPED,	/* ignored by configuration */
	VWC_ACT_FAILED,
};

/**
 * struct vwc_ctrl - one controller and what it reported
 * @name:		nvmeN
 * @syspath:		its sysfs directory
 * @devnode:		/dev/nvmeN
 * @model:		model number, from sysfs
 * @serial:		serial number, from sysfs
 * @firmware:		firmware revision, from sysfs
 * @transport:		pcie, tcp, rdma, fc, loop
 * @subsysnqn:		its NVM subsystem; "" if none
 * @pci_id:		"1b36:0010", empty if not PCI
 * @pci_vendor:		the PCI vendor ID, 0 if not PCI
 * @pci_device:		the PCI device ID, 0 if not PCI
 * @modalias:		of the PCI function, for hwdb
 * @hwdb_quirks:	NVME_VWC_SYNC_QUIRKS from hwdb
 * @kernel_quirks:	/sys/class/nvme/nvmeN/quirks
 * @has_kernel_quirks:	that file exists
 * @wz_ignored:		the kernel ignores disable_write_zeroes on it
 *			(wz-ignored.h): recorded by quirks, or shown now
 * @wz_ignored_why:	the reason, for the report
 * @held_fd:		> 0: an fd the caller keeps open
 * @wanted:		probe it
 * @probed:		the probe ran (its outcome in @err, @facts)
 * @err:		open failure, 0 if opened
 * @errmsg:		what failed, for the report
 * @vwc:		Identify VWC byte if present known
 * @critical_warning:	SMART critical warning byte
 * @facts:		what the policy decides on
 * @decision:		what the policy decided for it alone
 * @irqc:		interrupt coalescing outcome, if asked
 * @nsids:		active namespace ids (CNS 02h), read when the
 *			subsystem has other controllers; to free
 * @nr_nsids:		how many
 * @nsids_known:	@nsids read; else it may reach any namespace of its
 *			subsystem
 * @ver:		Identify Controller VER (NVMe version), 0 if not read
 * @ns_indep_refused:	refused the I/O Command Set Independent Identify
 *			Namespace once: not asked again (an error log entry
 *			each time)
 * @cntrltype:		/sys/class/nvme/nvmeN/cntrltype ("io", "discovery",
 *			"admin"; "" where the kernel does not say)
 * @discovery:		a discovery controller (vwc_ctrl_is_discovery()):
 *			no namespace, nothing to decide; never selected
 * @ino:		inode number of its entry under <sysfs>/class/nvme, as
 *			the scan's readdir gave it (kernfs gives a new device
 *			object a new one: its identity, with no stat); 0 not
 *			known
 * @kernel_wce:		the kernel was seen honouring WCE for it: with VWC
 *			present and WCE=0 it exposed every namespace of it
 *			without a write cache (queue/fua 0) on its own. Its
 *			namespaces' write through is left to the kernel
 *			(vwc_run_apply()); kept across rescans by name
 */
struct vwc_ctrl {
	char name[VWC_NAME_LEN];
	char syspath[VWC_PATH_LEN];
	char devnode[VWC_PATH_LEN];
	char model[48];
	char serial[32];
	char firmware[16];
	char transport[16];
	char subsysnqn[VWC_NQN_LEN];
	char pci_id[16];
	uint16_t pci_vendor;
	uint16_t pci_device;
	char modalias[128];
	char hwdb_quirks[128];
	char kernel_quirks[256];
	bool has_kernel_quirks;
	bool wz_ignored;
	char wz_ignored_why[1024];

	int held_fd;
	bool wanted;
	bool probed;
	int err;
	char errmsg[400];
	uint8_t vwc;
	uint8_t critical_warning;
	struct vwc_facts facts;
	struct vwc_decision decision;
	char irqc[200];
	uint32_t *nsids;
	int nr_nsids;
	bool nsids_known;
	uint32_t ver;
	bool ns_indep_refused;
	char cntrltype[16];
	bool discovery;
	uint64_t ino;
	bool kernel_wce;
};

/**
 * struct vwc_ns - one namespace as the block layer exposes it
 * @name:		nvmeXnY (the multipath head when there is one)
 * @syspath:		its sysfs directory, NULL not known: a scan's namespace
 *			points at the string of its entry in
 *			&vwc_topo.links (freed with the topology, not by
 *			itself); one made elsewhere, at a string its maker
 *			keeps. Not an array: thousands of namespaces of
 *			4 KiB each were what a scan allocated, sorted and
 *			faulted in at fabrics scale
 * @ctrl:		indices into &vwc_topo.ctrls: the controllers that
 *			reach it
 * @nr_ctrl:		how many
 * @path_syspath:	hidden multipath paths (nvmeXcYnZ): their sysfs
 *			directories, the strings their class entries hold
 *			in &vwc_topo.links (freed with the topology, as
 *			@syspath's: thousands at fabrics scale, copied at
 *			every scan before)
 * @nr_paths:		how many
 * @ino:		inode number of its entry (the head's, or the disk's
 *			without multipath) under <sysfs>/class/block, as for
 *			&vwc_ctrl.ino; 0 not known
 * @nsid:		read by vwc_topo_link_reach(); 0 not known
 * @nr_joining:		the last of @ctrl: controllers that reach it by
 *			their active namespace list alone (no node of it
 *			through them yet)
 * @no_vwc:		the namespace's own "no volatile write cache" bit
 *			(vwc_nvme_ns_no_vwc()), the same through every
 *			path: unknown until read (vwc_probe_ns())
 * @wanted:		selected by the run
 * @decision:		what the policy decided over every controller of
 *			@ctrl and @no_vwc
 * @before:		queue/write_cache as found
 * @after:		queue/write_cache as left
 * @action:		what happened to it
 * @written:		nodes (head or paths) vwc_blk_apply() wrote in its
 *			last call: 0 when everything already was as decided
 * @kernel_held:	write back was decided, but the kernel holds no
 *			write cache for it (queue/fua 0: it read WCE=0
 *			itself, or the namespace has none), so write back
 *			cannot be written; the mode is the kernel's
 * @overtaken:		write through failed because write back was read
 *			back: another writer's write came after ours
 *			(vwc_blk_apply(); the engine tries once more)
 * @errmsg:		what failed, for the report
 */
struct vwc_ns {
	char name[VWC_NAME_LEN];
	const char *syspath;
	int *ctrl;
	int nr_ctrl;
	const char **path_syspath;
	int nr_paths;
	uint32_t nsid;
	uint64_t ino;
	int nr_joining;
	enum vwc_tri no_vwc;

	bool wanted;
	struct vwc_decision decision;
	enum vwc_mode before;
	enum vwc_mode after;
	enum vwc_action action;
	int written;
	bool kernel_held;
	bool overtaken;
	char errmsg[160];
};

/**
 * struct vwc_topo_link - an entry of <sysfs>/class/nvme or class/block as a
 *			  scan found it
 * @name:	its name (nvme0, nvme0n1, nvme0c1n1)
 * @ino:	its inode number (sysfs gives each new entry a new one)
 * @syspath:	the device directory its link leads to (allocated)
 */
struct vwc_topo_link {
	char name[VWC_NAME_LEN];
	uint64_t ino;
	char *syspath;
};

/**
 * struct vwc_topo - the host's NVMe devices
 * @ctrls:	controllers
 * @nr_ctrls:	how many
 * @ns:		namespaces
 * @nr_ns:	how many
 * @sysfs:	the root it was scanned from
 * @others:	the controllers a scan of some subsystems passed over (by
 *		name): there at the scan, in another subsystem
 * @nr_others:	how many
 * @sorted:	@ctrls and @ns are in the order of their names, as a scan
 *		leaves them: vwc_topo_find_ctrl() and vwc_topo_find_ns()
 *		bisect (one built otherwise, by a test, is walked)
 * @links:	the class entries the scan looked at, of class/nvme ([0])
 *		and class/block ([1]), in the order of their paths: what
 *		vwc_topo_rescan_sysfs() takes from a last scan (class/block's:
 *		a controller's link is read at every scan)
 * @nr_links:	how many of each
 * @names_sig:	vwc_topo_names_sig()'s number for the entries the scan's
 *		own readdirs saw (one that came after is not in it): the
 *		sidecar need not read the names again before a scan it makes
 *		anyway
 */
struct vwc_topo {
	struct vwc_ctrl *ctrls;
	int nr_ctrls;
	struct vwc_ns *ns;
	int nr_ns;
	char sysfs[256];
	char (*others)[VWC_NAME_LEN];
	int nr_others;
	bool sorted;
	struct vwc_topo_link *links[2];
	int nr_links[2];
	uint64_t names_sig;
};

/**
 * vwc_topo_scan() - discover controllers and namespaces
 * @udev:	libudev context (unused: discovery reads /sys directly, see
 *		vwc_topo_scan_sysfs())
 * @t:		result, to free with vwc_topo_free()
 *
 * Return: 0 or a negative errno.
 */
int vwc_topo_scan(struct udev *udev, struct vwc_topo *t);

/**
 * vwc_topo_names_sig() - the device objects under <sysfs>/class/nvme and
 *			  <sysfs>/class/block, as one number
 * @sysfs:	"/sys", or a copy (tests)
 *
 * One readdir of each: every entry whose name starts with "nvme", its
 * name and its inode number (sysfs gives each new device's entry a new
 * one: a disk or controller that went and came back under the same name
 * is a change), in no order. Cheap next to a scan: the sidecar reads it
 * to tell whether a scan can find anything new.
 *
 * Return: the signature; a class directory that cannot be read counts
 * as empty.
 */
uint64_t vwc_topo_names_sig(const char *sysfs);

/**
 * vwc_topo_scan_sysfs() - discover controllers and namespaces under a
 *			   sysfs root
 * @sysfs:	"/sys", or a copy of its class/ and devices/ trees (tests)
 * @t:		result, to free with vwc_topo_free(); syspaths start with
 *		@sysfs
 *
 * Reads <sysfs>/class/nvme and <sysfs>/class/block directly: one readlink
 * per device, the controller's model, serial, firmware_rev and transport,
 * and vendor, device and modalias of its nearest PCI ancestor.
 *
 * Return: 0 or a negative errno.
 */
int vwc_topo_scan_sysfs(const char *sysfs, struct vwc_topo *t);

/**
 * vwc_topo_rescan_sysfs() - vwc_topo_scan_sysfs() again, after @prev
 * @sysfs:	as for vwc_topo_scan_sysfs()
 * @prev:	the last scan's result (a scan's: &vwc_topo.sorted)
 * @t:		result, to free with vwc_topo_free()
 *
 * A class/block entry of the same name and inode number as one @prev saw
 * is the same link of the same kernel object (sysfs makes a new entry,
 * with a new inode number, for a device that is added, even under a name
 * that was there before; a link leads to the object it was made for, which
 * the kernel does not move: classdir.h): its target is taken from @prev,
 * not read again; a controller's link is read at every scan. A @prev
 * scanned from another root is not used. A namespace whose entry is the
 * same keeps its namespace ID (read only where its subsystem has peers:
 * vwc_topo_link_reach()). A controller whose class entry is the one @prev
 * saw (the same inode number and sysfs path: the same kernel object) keeps
 * what sysfs shows the same for its lifetime (transport, subsystem NQN,
 * controller type, its PCI function's IDs and modalias) and its model and
 * serial as @prev had them (a probe's Identify may have refreshed those
 * since), and reads only firmware_rev again (a firmware activation changes
 * it). A @prev with no model or no transport is not carried at all; an
 * empty serial, subsystem NQN or controller type is read again. At fabrics
 * scale the sidecar scans again after every few connects: a readlink for
 * each of thousands of entries, seven attributes and a walk up to the PCI
 * function for each of hundreds of controllers, and a namespace ID for
 * each namespace, each time.
 *
 * Return: 0 or a negative errno.
 */
int vwc_topo_rescan_sysfs(const char *sysfs, const struct vwc_topo *prev,
			  struct vwc_topo *t);

/**
 * vwc_topo_scan_nqns() - discover the controllers of some NVM subsystems
 *			  and their namespaces
 * @sysfs:	as for vwc_topo_scan_sysfs()
 * @t:		result, to free with vwc_topo_free()
 * @nqns:	subsystem NQNs
 * @nr:		how many
 *
 * What vwc_topo_scan_sysfs() would find, less every controller whose
 * subsysnqn is not one of @nqns and every block device none of the others
 * owns: a command that names one controller or namespace decides from its
 * subsystem's controllers alone (every controller that can reach a
 * namespace reports the namespace's subsystem NQN), and reads a few
 * entries where a host at array scale has thousands. Each controller's
 * subsysnqn is read; block devices are passed over by name (the instance
 * numbers in nvmeXnY and nvmeXcYnZ) without a readlink.
 *
 * Return: 0 or a negative errno.
 */
int vwc_topo_scan_nqns(const char *sysfs, struct vwc_topo *t,
		       const char *const *nqns, int nr);

/**
 * vwc_ns_add_ctrl() - count a controller among a namespace's
 * @ns:		namespace of a scan (its @ns->ctrl made by the scan or by
 *		this function: room for two, doubled when full, the room
 *		implied by @ns->nr_ctrl, which may fall; an array made
 *		otherwise must not be grown here)
 * @c:		controller index (nothing when negative or already there)
 *
 * Return: 0, or -ENOMEM (@ns as it was).
 */
int vwc_ns_add_ctrl(struct vwc_ns *ns, int c);

/**
 * vwc_topo_free() - free what vwc_topo_scan() allocated
 * @t:	topology
 */
void vwc_topo_free(struct vwc_topo *t);

/**
 * vwc_topo_find_ctrl() - controller by name
 * @t:		topology
 * @name:	"nvme0"
 *
 * Return: its index, or -1.
 */
int vwc_topo_find_ctrl(const struct vwc_topo *t, const char *name);

/**
 * vwc_topo_find_ns() - namespace by block name
 * @t:		topology
 * @name:	"nvme0n1"
 *
 * Return: its index, or -1.
 */
int vwc_topo_find_ns(const struct vwc_topo *t, const char *name);

/**
 * vwc_ns_has_ctrl() - does controller @c reach namespace @ns
 * @ns:		namespace
 * @c:		controller index
 *
 * Return: true if it does.
 */
bool vwc_ns_has_ctrl(const struct vwc_ns *ns, int c);

/**
 * vwc_ctrl_peers() - do two controllers belong to one NVM subsystem
 * @a:		controller
 * @b:		controller
 *
 * Controllers of one subsystem may reach the same namespaces (multipath,
 * native or not). Discovery controllers share a well-known NQN and no
 * namespace: never peers.
 *
 * Return: true if @a and @b are distinct controllers of one subsystem.
 */
bool vwc_ctrl_peers(const struct vwc_ctrl *a, const struct vwc_ctrl *b);

/**
 * vwc_ctrl_is_discovery() - is a controller a discovery controller
 * @t:		topology
 * @c:		controller index
 *
 * A discovery controller (the well-known discovery NQN, or cntrltype
 * "discovery") has no namespace, no volatile write cache and no SMART
 * log: there is nothing to decide for it. One that some namespace of @t
 * is reached through is not taken for one.
 *
 * Return: true if it is one.
 */
bool vwc_ctrl_is_discovery(const struct vwc_topo *t, int c);

/**
 * vwc_topo_has_peers() - does controller @c share its subsystem
 * @t:		topology
 * @c:		controller index
 *
 * Return: true if another controller of @t is a peer (vwc_ctrl_peers()).
 */
bool vwc_topo_has_peers(const struct vwc_topo *t, int c);

/**
 * vwc_topo_link_reach() - add the controllers that reach a namespace
 *			   without a node of it yet
 * @t:		topology
 *
 * A controller that joins a subsystem (its PCI function bound again, a
 * fabrics port reconnected, a namespace attached) reaches the subsystem's
 * namespaces before the kernel has made their path nodes, and with
 * nvme_core.multipath=N one namespace is a block device per controller.
 * For every namespace, each peer of its controllers whose active
 * namespace list names the namespace's id, or whose list is not known
 * (nsids_known false: it may reach any), is added to the namespace's
 * controllers, so that the decision counts it. What an earlier call added
 * is dropped first: call it again whenever a list was read.
 * vwc_topo_scan_sysfs() calls it (no list known yet: every peer counts).
 * With no memory to add one, the namespace is left with no controller,
 * which the policy takes as write back.
 * Reads each such namespace's id from sysfs once.
 */
void vwc_topo_link_reach(struct vwc_topo *t);

/**
 * vwc_ns_read_nsid() - a namespace's id, from sysfs
 * @ns:		namespace (its head node with multipath)
 *
 * Return: the id, or 0 if it cannot be read.
 */
uint32_t vwc_ns_read_nsid(const struct vwc_ns *ns);

/**
 * vwc_topo_new_peer() - has a controller joined @ns's subsystem since the
 *			 scan
 * @t:		topology
 * @ns:		namespace of @t
 *
 * A writer decides from the controllers it scanned; one that appeared
 * since (bound again, reconnected) may reach @ns with its cache on. Lists
 * <sysfs>/class/nvme again and reads the subsystem NQN of every controller
 * @t does not have and did not pass over (@others), and of every one @t
 * has without a subsystem NQN (scanned before it was identified). Called
 * under the writers' lock, before write through, after the mark of
 * vwc_blk_mark_wt(): a controller whose connected event udev's rule left
 * to the sidecar before the mark was identified by then.
 *
 * Return: true if such a controller shares @ns's subsystem, or if @ns's
 * controllers cannot tell its subsystem (no controller, an unreadable
 * listing): write through is then not to be decided from @t.
 */
bool vwc_topo_new_peer(const struct vwc_topo *t, const struct vwc_ns *ns);

#endif
