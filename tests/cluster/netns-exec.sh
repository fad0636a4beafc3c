#!/usr/bin/env bash
# The "ssh" of multi-host tests: Hydra (`-launcher ssh -launcher-exec THIS`) and Open MPI
# (`plm_rsh_agent`) call it as an ssh client: [options] HOST COMMAND...; it runs COMMAND in
# the network namespace whose eth0 has address HOST (made by netns-up.sh), with a host name
# of its own (a UTS namespace named like the network namespace), as a real host has: MPI
# runtimes key their session files by host name, and four "hosts" named alike collide.
set -eu
while [ $# -gt 0 ]; do
    case $1 in
        -x|-q|-T|-n|-tt|-t) shift ;;
        -o|-p|-l) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
host=$1
shift
for ns in $(ip netns list | awk '{print $1}'); do
    case $ns in hc-*) ;; *) continue ;; esac
    if ip -n "$ns" -4 -o addr show dev eth0 2>/dev/null | grep -q " $host/"; then
        exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns && $*"
    fi
done
echo "netns-exec: no test namespace has address $host" >&2
exit 255
