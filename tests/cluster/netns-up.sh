#!/usr/bin/env bash
# Build N "hosts" on this machine for multi-host tests: network namespaces joined by a
# bridge, addresses in a private range, nothing routed anywhere else.
#
#   netns-up.sh TAG N    -> namespaces hc-TAG-1..N, bridge hcbr-TAG (10.X.Y.1/24 in the
#                           root namespace), host i at 10.X.Y.(i+1); prints the bridge name,
#                           then one address per host
#   netns-down.sh TAG N  -> removes all of it (idempotent)
#
# TAG keeps runs apart (the tests use their pid); X.Y is derived from it. Root only.
set -eu
tag=$1
n=$2
br="hcbr-$tag"
[ ${#br} -le 15 ] || { echo "tag $tag too long for an interface name" >&2; exit 2; }
# A /24 in 10.200.0.0/13 chosen from the tag, so parallel runs do not collide.
h=$(printf '%s' "$tag" | cksum | cut -d' ' -f1)
net="10.$((200 + h % 8)).$(((h / 8) % 256))"
cleanup_on_error() {
    "$(dirname "$0")/netns-down.sh" "$tag" "$n" >/dev/null 2>&1 || true
}
trap cleanup_on_error ERR
ip link add "$br" type bridge
ip addr add "$net.1/24" dev "$br"
ip link set "$br" up
for i in $(seq 1 "$n"); do
    ns="hc-$tag-$i"
    ip netns add "$ns"
    # IPv4 only, like the private network it stands for: a link-local IPv6 address on
    # every veth would tempt MPI runtimes to wire themselves over it (Open MPI hangs so).
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip link add "hcv-$tag-$i" type veth peer name eth0 netns "$ns"
    ip link set "hcv-$tag-$i" master "$br" up
    ip -n "$ns" addr add "$net.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
done
trap - ERR
echo "$br"
for i in $(seq 1 "$n"); do echo "$net.$((i + 1))"; done
