#!/bin/sh
# One node of the release's Redis Cluster (templates/redis-cluster.yaml). From the pod's
# environment: POD_NAME, REDIS_STS, REDIS_NODES, REDIS_NODE_SUFFIX, REDIS_NODE_TIMEOUT_MS,
# REDIS_MAXMEMORY, REDIS_PASSWORD.
set -eu
conf=/data/nodes.conf
self="$POD_NAME$REDIS_NODE_SUFFIX"

# The node knows its peers by the addresses in nodes.conf, kept on its volume. Redis's gossip
# follows one node that came back on a new address, not a cluster whose pods all came back on new
# ones at once (a zone lost, every node drained): each node would call addresses nobody holds any
# more. So before it starts, every peer that resolves (the headless Service publishes pods before
# they are ready) is written at its current address, peers still being placed waited for a little.
if [ -s "$conf" ]; then
  tries=0
  while :; do
    map="" missing=0 i=0
    while [ "$i" -lt "$REDIS_NODES" ]; do
      host="$REDIS_STS-$i$REDIS_NODE_SUFFIX"
      if [ "$host" != "$self" ]; then
        ip=$(getent hosts "$host" | awk '{ print $1; exit }')
        if [ -n "$ip" ]; then map="$map $host=$ip"; else missing=$((missing + 1)); fi
      fi
      i=$((i + 1))
    done
    if [ "$missing" -eq 0 ] || [ "$tries" -ge 15 ]; then break; fi
    tries=$((tries + 1))
    sleep 2
  done
  # A node's line: <id> <ip>:<port>@<bus port>,<hostname>[,…] <flags> …: the address before the
  # port is replaced (an IPv6 address has colons of its own: the port is matched from the end).
  awk -v map="$map" '
    BEGIN { n = split(map, pairs, " "); for (k = 1; k <= n; k++) { split(pairs[k], kv, "="); ip[kv[1]] = kv[2] } }
    NF > 2 {
      split($2, parts, ",")
      if ((parts[2] in ip) && match(parts[1], /:[0-9]+@[0-9]+$/)) {
        $2 = ip[parts[2]] substr(parts[1], RSTART) substr($2, length(parts[1]) + 1)
      }
    }
    { print }' "$conf" > "$conf.tmp"
  mv "$conf.tmp" "$conf"
fi

# The node announces its stable name, and clients are redirected to names (MOVED, CLUSTER SLOTS),
# never to pod addresses that change. Only the slots of a lost primary wait for its replica
# (cluster-require-full-coverage no): the other primaries' tables play on. The password reaches
# redis-server on stdin (a here-document: `exec` then makes redis-server PID 1, which gets the
# SIGTERM), never on its command line.
exec redis-server - --dir /data --port 6379 \
  --cluster-enabled yes --cluster-config-file nodes.conf \
  --cluster-node-timeout "$REDIS_NODE_TIMEOUT_MS" \
  --cluster-announce-hostname "$self" --cluster-preferred-endpoint-type hostname \
  --cluster-require-full-coverage no \
  --appendonly yes --appendfsync everysec \
  --maxmemory "$REDIS_MAXMEMORY" --maxmemory-policy noeviction <<CONF
requirepass "$REDIS_PASSWORD"
masterauth "$REDIS_PASSWORD"
CONF
