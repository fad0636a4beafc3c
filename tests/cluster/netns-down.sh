#!/usr/bin/env bash
# Remove what netns-up.sh TAG N made: the namespaces (after killing any process still in
# one — only processes inside our own namespaces), the veths and the bridge. Idempotent.
set -u
tag=$1
n=$2
for i in $(seq 1 "$n"); do
    ns="hc-$tag-$i"
    if ip netns list | grep -qw "$ns"; then
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns delete "$ns" 2>/dev/null
    fi
    ip link delete "hcv-$tag-$i" 2>/dev/null
done
ip link delete "hcbr-$tag" 2>/dev/null
exit 0
