#!/bin/sh
# Readiness of a cluster node: it answers, it sees the cluster serving from where it stands
# (cluster_state:ok: not before the bootstrap, nor in a minority), and a replica is in step with
# its primary. The PodDisruptionBudget counts on it: no node is drained while another is down or
# a replica is still copying, so a primary never goes without a replica ready to take over.
[ "$(redis-cli ping)" = PONG ] || exit 1
redis-cli cluster info | grep -q '^cluster_state:ok' || exit 1
replication=$(redis-cli info replication)
case "$replication" in
  *role:slave*) echo "$replication" | grep -q '^master_link_status:up' || exit 1 ;;
esac
exit 0
