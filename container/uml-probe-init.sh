#!/bin/sh
# Bobbin's User-Mode Linux boot probe: PID 1 of one tiny guest (container/umlprobe.go).
# It does what every container's guest does first — mount /proc, fork and exec programs —
# and what kernels that mishandle the host CPU's register state fail at: bash taking a
# signal (the guest kernel writes the FP state into a signal frame and back at
# sigreturn). Each step prints a line the probe looks for on the console.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
echo "bobbin-probe: init"
mount -t proc proc /proc && echo "bobbin-probe: proc"
/bin/true && echo "bobbin-probe: exec"
/bin/bash -c 'trap "echo bobbin-probe: signal" USR1; kill -USR1 $$; x=$((6 * 7)); echo "bobbin-probe: bash $x"'
echo "bobbin-probe: done"
echo o >/proc/sysrq-trigger
sleep 10
