#!/bin/sh
# Bobbin's User-Mode Linux guest init: PID 1 of one container's guest.
#
# The kernel command line names the guest configuration written by the NodeManager
# (BOBBIN_CONF=<file>); kernel K=V parameters reach init as environment, but the command
# line is limited to about 4 KB, so everything else is in that file. This script mounts
# the kernel filesystems and the container's directories, sets up slirp networking,
# runs the launch script, and writes "<exit code> <oom kills> <map kills>" atomically to the exit
# file before powering the guest off. It must stay POSIX sh: in confined mode the root
# may hold little more than a shell and coreutils.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH

die() {
	echo "bobbin-guest: $*"
	echo o >/proc/sysrq-trigger
	sleep 5
	exit 1
}

[ -n "$BOBBIN_CONF" ] || die "no BOBBIN_CONF on the kernel command line"
. "$BOBBIN_CONF" || die "cannot read $BOBBIN_CONF"
unset BOBBIN_CONF

mount -t proc proc /proc || die "mount /proc failed"
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm 2>/dev/null
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /dev/shm 2>/dev/null
# Unconfined, the guest's /tmp is the host's, writable as it is for a process container
# (job configuration and directories often live there). Confined, it is a tmpfs of its
# own; container directories under /tmp then get mount points created in it.
if [ "$BOBBIN_TMP" = host ]; then
	mount -t hostfs -o /tmp hostfs /tmp || die "cannot mount the host's /tmp"
else
	mount -t tmpfs -o mode=1777 tmpfs /tmp
fi

old_ifs=$IFS
IFS='
'
for d in $BOBBIN_RW_DIRS; do
	[ -d "$d" ] || mkdir -p "$d" 2>/dev/null
	mount -t hostfs -o "$d" hostfs "$d" || die "cannot mount container directory $d"
done
IFS=$old_ifs

[ -n "$BOBBIN_HOSTNAME" ] && echo "$BOBBIN_HOSTNAME" >/proc/sys/kernel/hostname

if [ -n "$BOBBIN_IP" ]; then
	ip link set lo up
	# eth0 behind UML's slirp transport, vec0 behind the vector driver's (umlnet.go).
	dev=${BOBBIN_NETDEV:-eth0}
	ip addr add "$BOBBIN_IP/24" dev "$dev" || die "cannot configure $dev with $BOBBIN_IP"
	ip link set "$dev" up
	ip route add default via 10.0.2.2
	if [ "$BOBBIN_HOST_LOOPBACK" = true ]; then
		# The guest's 127.0.0.0/8 is routed to slirp, which connects to the host's
		# loopback: addresses such as localhost:8030 in the job's configuration mean
		# the host's services, as they do for a container that is a plain process.
		ip addr del 127.0.0.1/8 dev lo 2>/dev/null
		echo 1 >/proc/sys/net/ipv4/conf/all/route_localnet
		echo 1 >"/proc/sys/net/ipv4/conf/$dev/route_localnet"
		ip route add 127.0.0.0/8 via 10.0.2.2 dev "$dev"
	fi
else
	ip link set lo up 2>/dev/null
fi

# The container's processes run in a memory cgroup of their own, limited to the guest's
# memory less a reserve for this init: when they outgrow it the kernel's OOM killer ends
# the whole container (memory.oom.group, as YARN kills a container over its memory) at
# once, instead of the guest first reclaiming its shared pages (init's, the shells') for
# as long as any are left. Without cgroup2 the guest-wide OOM killer is the limit.
cg=
if mkdir -p /sys/fs/cgroup 2>/dev/null && mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null &&
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && mkdir /sys/fs/cgroup/container 2>/dev/null; then
	total=0
	while read -r k v _; do
		[ "$k" = MemTotal: ] && total=$v
	done </proc/meminfo
	# KB for init, and for the relay agent (a Go process) when it runs.
	reserve=16384
	[ -n "$BOBBIN_RELAY" ] && reserve=40960
	if [ "$total" -gt $((reserve * 2)) ] && echo $(((total - reserve) * 1024)) >/sys/fs/cgroup/container/memory.max; then
		echo 1 >/sys/fs/cgroup/container/memory.oom.group 2>/dev/null
		cg=/sys/fs/cgroup/container
	fi
fi

# The relay agent: the ports the container's processes listen on are forwarded from the
# same ports at the host (umlrelay), so that its tasks and its job client reach an AM
# that runs here. Out of the container's cgroup (its memory in the reserve above),
# its output in the container's .bobbin-uml/relay.log.
if [ -n "$BOBBIN_RELAY" ] && [ -n "$BOBBIN_IP" ]; then
	BOBBIN_RELAY_TOKEN=$BOBBIN_RELAY_TOKEN GOMEMLIMIT=16MiB "$BOBBIN_RELAY_AGENT" uml-guest-relay --relay "$BOBBIN_RELAY" --guest-ip "$BOBBIN_IP" \
		>"${BOBBIN_UP_FILE%/*}/relay.log" 2>&1 &
fi
unset BOBBIN_RELAY_TOKEN

: >"$BOBBIN_UP_FILE"

cd "$BOBBIN_WORKDIR" || die "cannot enter $BOBBIN_WORKDIR"
(
	[ -n "$cg" ] && echo 0 >"$cg/cgroup.procs"
	. "$BOBBIN_ENV_FILE"
	exec /bin/bash "$BOBBIN_SCRIPT"
)
rc=$?
oom=0
while read -r k v; do
	[ "$k" = oom_kill ] && oom=$v
done </proc/vmstat
# Processes UML itself killed because the host refused to map guest memory (the host's
# vm.max_map_count): not the OOM killer, the guest had memory left. A confined root may
# have no dmesg; then none are counted.
maps=0
if command -v dmesg >/dev/null 2>&1; then
	maps=$(dmesg 2>/dev/null | grep -c -e 'UML ran out of memory on the host side' -e 'fix_range_common: failed, killing current process')
fi
echo "$rc $oom ${maps:-0}" >"$BOBBIN_EXIT_FILE.tmp" && mv "$BOBBIN_EXIT_FILE.tmp" "$BOBBIN_EXIT_FILE"
sync
echo o >/proc/sysrq-trigger
sleep 10
