#!/bin/sh
# The Redis Cluster's bootstrap, run by a Job whenever the cluster's shape or image changes
# (templates/redis-cluster.yaml). Idempotent: it makes the cluster once, and on every later run
# only mends and checks it.
# - No node holds a slot: every node must be empty and alone (else it stops and touches nothing),
#   then `redis-cli --cluster create`, REDIS_REPLICAS replicas per primary.
# - A cluster exists: a node it does not know is introduced (CLUSTER MEET), an empty node with no
#   slot (a pod that lost its volume, or one more replica per primary) becomes a replica of the
#   primary with the fewest, and the old identity of a pod that lost its volume is forgotten. It never moves a slot: a
#   change of `primaries` on a live cluster is refused, with the way to do it by hand.
# Done when every node sees cluster_state:ok and `redis-cli --cluster check` passes.
# From the Job's environment: REDIS_STS, REDIS_NODES, REDIS_NODE_SUFFIX, REDIS_PRIMARIES,
# REDIS_REPLICAS, REDISCLI_AUTH.
set -eu

log() { echo "[bootstrap] $*"; }
cli() {
  addr=$1
  shift
  redis-cli -h "${addr%:*}" -p "${addr##*:}" "$@"
}
field() { tr -d '\r' | sed -n "s/^$1://p"; }

# Every node by its stable name, at its current address, once all of them answer.
while :; do
  addrs="" waiting="" i=0
  while [ "$i" -lt "$REDIS_NODES" ]; do
    host="$REDIS_STS-$i$REDIS_NODE_SUFFIX"
    ip=$(getent hosts "$host" | awk '{ print $1; exit }')
    if [ -n "$ip" ] && [ "$(cli "$ip:6379" ping 2>/dev/null)" = PONG ]; then
      addrs="$addrs $ip:6379"
    else
      waiting="$waiting $host"
    fi
    i=$((i + 1))
  done
  [ -z "$waiting" ] && break
  log "waiting for:$waiting"
  sleep 3
done

member=""
for a in $addrs; do
  if [ "$(cli "$a" cluster info | field cluster_slots_assigned)" -gt 0 ]; then
    member=$a
    break
  fi
done

if [ -z "$member" ]; then
  for a in $addrs; do
    known=$(cli "$a" cluster info | field cluster_known_nodes)
    keys=$(cli "$a" dbsize)
    if [ "$known" != 1 ] || [ "$keys" != 0 ]; then
      log "not creating a cluster: $a holds no slot but knows $known node(s) and $keys key(s)"
      exit 1
    fi
  done
  log "creating the cluster:$addrs ($REDIS_REPLICAS replica(s) per primary)"
  # shellcheck disable=SC2086 # one argument per node
  redis-cli --cluster create $addrs --cluster-replicas "$REDIS_REPLICAS" --cluster-yes
  member=${addrs# }
  member=${member%% *}
else
  primaries=$(cli "$member" cluster nodes | awk '$3 ~ /master/ && NF > 8' | wc -l)
  if [ "$primaries" -ne "$REDIS_PRIMARIES" ]; then
    log "the cluster has $primaries primaries holding slots, the values ask for $REDIS_PRIMARIES:"
    log "slots are never moved here (docs/operations.md, 'More primaries')"
    exit 1
  fi
  for a in $addrs; do
    if ! cli "$member" cluster nodes | grep -q " $a@"; then
      log "introducing $a"
      cli "$member" cluster meet "${a%:*}" "${a##*:}"
    fi
  done
  for a in $addrs; do
    flags=$(cli "$a" cluster nodes | awk '$3 ~ /myself/ { print $3 ":" NF }')
    if [ "$flags" = "myself,master:8" ] && [ "$(cli "$a" dbsize)" = 0 ]; then
      tries=0
      until primary=$(cli "$member" cluster nodes | awk '
              $3 ~ /master/ && $3 !~ /fail|noaddr/ && NF > 8 { count[$1] += 0 }
              $3 ~ /slave/ && $3 !~ /fail|noaddr/ { count[$4]++ }
              END { for (id in count) if (best == "" || count[id] < low) { best = id; low = count[id] }
                    print best }') &&
        cli "$a" cluster replicate "$primary" | grep -q OK; do
        tries=$((tries + 1))
        [ "$tries" -lt 30 ] || { log "$a could not become a replica"; exit 1; }
        sleep 2 # it learns the cluster's nodes by gossip first
      done
      log "$a is a replica of $primary now"
    fi
  done
  # A pod that came back without its volume is a new node under an old name: its old identity
  # (failed, or with no address once another node answers there; no slot) is forgotten by every
  # node, or the cluster would list it for good.
  cli "$member" cluster nodes | awk '
    { split($2, p, ","); name[$1] = p[2] }
    $3 ~ /fail|noaddr/ && $3 !~ /myself/ && NF == 8 { gone[$1] = 1 }
    $3 !~ /fail|noaddr|handshake/ { live[p[2]] = 1 }
    END { for (id in gone) if (name[id] != "" && (name[id] in live)) print id }' |
    while read -r old; do
      log "forgetting $old, a lost node whose name another node holds now"
      for a in $addrs; do cli "$a" cluster forget "$old" >/dev/null 2>&1 || true; done
    done
fi

tries=0
while :; do
  bad=""
  for a in $addrs; do
    [ "$(cli "$a" cluster info | field cluster_state)" = ok ] || bad="$bad $a"
  done
  if [ -z "$bad" ] && redis-cli --cluster check "$member" >/tmp/check 2>&1; then
    cat /tmp/check
    log "the cluster is whole: $(cli "$member" cluster info | field cluster_size) primaries, every slot served"
    exit 0
  fi
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    cat /tmp/check
    log "not whole after 120 s; not ok:$bad"
    exit 1
  fi
  sleep 2
done
