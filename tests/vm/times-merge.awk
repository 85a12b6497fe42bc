# Merge the VM suite's run times: awk -f times-merge.awk OLD NEW
# Lines "KERNEL CASE SECONDS [CPU]": a run's wall time and its QEMU's CPU
# seconds. NEW's lines replace OLD's of the same run, but a share of a core
# (CPU / SECONDS) lower than OLD's does not replace it: CPU is written as
# OLD's share of NEW's SECONDS. A guest slowed beside others takes longer
# at a lower share, and the lower figure would let more guests boot
# beside it the next time, and slow it more. OLD's other lines are kept,
# first; a line without CPU keeps none.
FILENAME == ARGV[1] {
	if ($4 > 0 && $3 > 0)
		share[$1 " " $2] = $4 / $3
	old[FNR] = $0
	key[FNR] = $1 " " $2
	n = FNR
	next
}
{
	k = $1 " " $2
	seen[k] = 1
	if ($4 > 0 && $3 > 0 && (k in share) && share[k] > $4 / $3)
		$4 = sprintf("%.1f", share[k] * $3)
	out[++m] = $0
}
END {
	for (i = 1; i <= n; i++)
		if (!(key[i] in seen))
			print old[i]
	for (i = 1; i <= m; i++)
		print out[i]
}
