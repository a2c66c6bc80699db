#!/bin/sh
# preStop of a cluster node: a primary hands its slots to an in-step replica before it stops.
# CLUSTER FAILOVER, sent to the replica, is the coordinated kind: the primary holds its clients,
# the replica takes every write it had, then takes over. No write is lost and clients wait
# milliseconds, where a primary that just stops leaves its slots unserved for the node timeout
# and can take its last writes with it (replication is asynchronous). Bounded well inside the
# pod's grace period; whatever fails, the pod still stops.
set -u
[ "$(redis-cli role | head -n 1)" = master ] || exit 0
me=$(redis-cli cluster myid)
# <id> <ip>:<port>@<bus port>[,<hostname>] <flags> <primary> <ping> <pong> <epoch> <link state>
replica=$(redis-cli cluster replicas "$me" |
  awk '$3 !~ /fail/ && $NF == "connected" { split($2, a, "@"); print a[1]; exit }')
[ -n "$replica" ] || exit 0
redis-cli -h "${replica%:*}" -p "${replica##*:}" cluster failover || exit 0
i=0
while [ "$i" -lt 20 ]; do
  if [ "$(redis-cli role | head -n 1)" = slave ]; then
    echo "handed my slots to $replica"
    exit 0
  fi
  sleep 1
  i=$((i + 1))
done
echo "no handoff to $replica within 20 s: stopping anyway"
