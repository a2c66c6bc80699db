{{- define "quatro.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's base name: the release alone when it already contains the chart's name, so that
`helm install quatro` does not give quatro-quatro-*. */}}
{{- define "quatro.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "quatro.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "<fullname>-<suffix>" cut so the whole fits `max` characters (63 unless told): the base is
cut, never the suffix, so two components never collide on a long release name. */}}
{{- define "quatro.named" -}}
{{- $max := int (default 63 .max) -}}
{{- $room := int (sub $max (add1 (len .suffix))) -}}
{{- printf "%s-%s" (include "quatro.fullname" .ctx | trunc $room | trimSuffix "-") .suffix -}}
{{- end -}}

{{- define "quatro.gatewayName" -}}
{{- include "quatro.named" (dict "ctx" . "suffix" "gateway") -}}
{{- end -}}

{{/* StatefulSet pods carry a controller-revision-hash label "<name>-<10 chars>" that must fit 63. */}}
{{- define "quatro.redisName" -}}
{{- include "quatro.named" (dict "ctx" . "suffix" "redis" "max" 52) -}}
{{- end -}}

{{/* KubeRay refuses RayCluster names over 53 characters: it derives longer names from them. */}}
{{- define "quatro.rayClusterName" -}}
{{- include "quatro.named" (dict "ctx" . "suffix" "ray" "max" 53) -}}
{{- end -}}

{{/* The head Service KubeRay creates for the cluster. */}}
{{- define "quatro.rayHeadService" -}}
{{- printf "%s-head-svc" (include "quatro.rayClusterName" .) -}}
{{- end -}}

{{- define "quatro.rayTokenSecret" -}}
{{- default (include "quatro.named" (dict "ctx" . "suffix" "ray-token")) .Values.ray.auth.existingSecret -}}
{{- end -}}

{{- define "quatro.redisSecret" -}}
{{- default (include "quatro.named" (dict "ctx" . "suffix" "redis-auth")) .Values.redis.auth.existingSecret -}}
{{- end -}}

{{- define "quatro.selectorLabels" -}}
app.kubernetes.io/name: {{ include "quatro.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "quatro.labels" -}}
{{ include "quatro.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 }}
{{- end -}}

{{- define "quatro.image" -}}
{{- if .Values.image.digest -}}
{{ printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end -}}
{{- end -}}

{{/* The game store (sessions, tables, snapshots) is a Redis Cluster: the chart's own
(redis.enabled) or an external one (redis.external.seeds). */}}
{{- define "quatro.redisCluster" -}}
{{- if eq .Values.redis.mode "cluster" -}}true{{- end -}}
{{- end -}}

{{- define "quatro.ownRedisCluster" -}}
{{- if and (eq .Values.redis.mode "cluster") .Values.redis.enabled -}}true{{- end -}}
{{- end -}}

{{/* The chart's own standalone Redis StatefulSet: the game store in standalone mode; in cluster
mode Ray's GCS store (Ray refuses a Redis Cluster of more than one shard) and, while a
standalone release moves over, the data it had (redis.migrateFromStandalone). */}}
{{- define "quatro.ownStandaloneRedis" -}}
{{- if eq .Values.redis.mode "cluster" -}}
{{- if or .Values.ray.gcsFaultTolerance.enabled .Values.redis.migrateFromStandalone -}}true{{- end -}}
{{- else if .Values.redis.enabled -}}true{{- end -}}
{{- end -}}

{{/* The cluster's StatefulSet and its headless Service share this name; pods are <name>-<i>. */}}
{{- define "quatro.redisClusterName" -}}
{{- include "quatro.named" (dict "ctx" . "suffix" "redis-cluster" "max" 52) -}}
{{- end -}}

{{- define "quatro.redisClusterNodes" -}}
{{- mul (int .Values.redis.cluster.primaries) (add1 (int .Values.redis.cluster.replicasPerPrimary)) -}}
{{- end -}}

{{/* What every cluster node's hostname ends with: <pod><suffix> is its stable DNS name (the
headless Service's record), which it announces and which clients are redirected to. */}}
{{- define "quatro.redisClusterSuffix" -}}
{{- printf ".%s.%s.svc.%s" (include "quatro.redisClusterName" .) .Release.Namespace .Values.redis.cluster.clusterDomain -}}
{{- end -}}

{{/* The cluster's seed nodes, "host:port,host:port": every node of the chart's own cluster (any
one that answers tells the client the rest), or the external seeds. */}}
{{- define "quatro.redisClusterSeeds" -}}
{{- if .Values.redis.enabled -}}
{{- $name := include "quatro.redisClusterName" . -}}
{{- $suffix := include "quatro.redisClusterSuffix" . -}}
{{- $seeds := list -}}
{{- range $i := until (int (include "quatro.redisClusterNodes" .)) -}}
{{- $seeds = append $seeds (printf "%s-%d%s:6379" $name $i $suffix) -}}
{{- end -}}
{{- join "," $seeds -}}
{{- else -}}
{{- join "," (required "redis.external.seeds is required for an external Redis Cluster" .Values.redis.external.seeds) -}}
{{- end -}}
{{- end -}}

{{- define "quatro.redisHost" -}}
{{- if .Values.redis.enabled -}}
{{ include "quatro.redisName" . }}
{{- else -}}
{{ required "redis.external.host is required when redis.enabled is false" .Values.redis.external.host }}
{{- end -}}
{{- end -}}

{{- define "quatro.redisPort" -}}
{{- if .Values.redis.enabled -}}6379{{- else -}}{{ .Values.redis.external.port }}{{- end -}}
{{- end -}}

{{- define "quatro.redisDb" -}}
{{- if .Values.redis.enabled -}}0{{- else -}}{{ .Values.redis.external.db }}{{- end -}}
{{- end -}}

{{/* TLS to an external Redis (the chart's own Redis is reached inside the namespace, behind
its NetworkPolicy, in the clear). */}}
{{- define "quatro.redisTls" -}}
{{- if and (not .Values.redis.enabled) .Values.redis.external.tls.enabled -}}true{{- end -}}
{{- end -}}

{{- define "quatro.redisScheme" -}}
{{- printf "redis%s%s" (ternary "s" "" (eq (include "quatro.redisTls" .) "true")) (ternary "+cluster" "" (eq (include "quatro.redisCluster" .) "true")) -}}
{{- end -}}

{{/* Where Redis is, for humans: never with the password. */}}
{{- define "quatro.redisDisplayUrl" -}}
{{- if include "quatro.redisCluster" . -}}
{{ include "quatro.redisScheme" . }}://{{ include "quatro.redisClusterSeeds" . }}
{{- else -}}
{{ include "quatro.redisScheme" . }}://{{ include "quatro.redisHost" . }}:{{ include "quatro.redisPort" . }}/{{ include "quatro.redisDb" . }}
{{- end -}}
{{- end -}}

{{/* Where a Redis TLS Secret is mounted in every pod that talks to the game store. */}}
{{- define "quatro.redisTlsDir" -}}/etc/quatro/redis-tls{{- end -}}
{{- define "quatro.redisClientCertDir" -}}/etc/quatro/redis-client{{- end -}}

{{/* REDIS_PASSWORD (and REDIS_USERNAME, an ACL user of an external Redis) from the Secret, then
REDIS_URL. A single Redis: the URL carries them, composed by Kubernetes itself ($(VAR) is expanded
from variables defined earlier in the same list), so the password is in no manifest. A cluster:
the URL names the seeds only, and the client factory takes the credentials from REDIS_PASSWORD /
REDIS_USERNAME (the URL travels to the table actors as an argument: better without a secret in
it). With TLS, the CA (and the client certificate for mutual TLS) as files. The gateway and every
Ray pod get the same, so a table actor's client is built like its gateway's. */}}
{{- define "quatro.redisEnv" -}}
{{- $r := .Values.redis -}}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "quatro.redisSecret" . }}
      key: {{ $r.auth.existingSecretKey }}
{{- $user := and (not $r.enabled) $r.auth.existingSecretUsernameKey }}
{{- if $user }}
- name: REDIS_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ include "quatro.redisSecret" . }}
      key: {{ $r.auth.existingSecretUsernameKey }}
{{- end }}
- name: REDIS_URL
{{- if include "quatro.redisCluster" . }}
  value: {{ printf "%s://%s" (include "quatro.redisScheme" .) (include "quatro.redisClusterSeeds" .) | quote }}
{{- else }}
  value: {{ printf "%s://%s:$(REDIS_PASSWORD)@%s:%s/%s" (include "quatro.redisScheme" .) (ternary "$(REDIS_USERNAME)" "" (not (not $user))) (include "quatro.redisHost" .) (include "quatro.redisPort" .) (include "quatro.redisDb" .) | quote }}
{{- end }}
{{- if include "quatro.redisTls" . }}
{{- with $r.external.tls }}
{{- if .caSecret }}
- name: REDIS_CA_FILE
  value: {{ printf "%s/ca.crt" (include "quatro.redisTlsDir" $) | quote }}
{{- end }}
{{- if .clientCertSecret }}
- name: REDIS_CLIENT_CERT_FILE
  value: {{ printf "%s/tls.crt" (include "quatro.redisClientCertDir" $) | quote }}
- name: REDIS_CLIENT_KEY_FILE
  value: {{ printf "%s/tls.key" (include "quatro.redisClientCertDir" $) | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The TLS Secrets as read-only volumes (only the keys the client reads), and their mounts. */}}
{{- define "quatro.redisTlsVolumes" -}}
{{- if include "quatro.redisTls" . }}
{{- with .Values.redis.external.tls }}
{{- if .caSecret }}
- name: redis-tls
  secret:
    secretName: {{ .caSecret }}
    defaultMode: 0440
    items:
      - {key: {{ .caKey }}, path: ca.crt}
{{- end }}
{{- if .clientCertSecret }}
- name: redis-client-cert
  secret:
    secretName: {{ .clientCertSecret }}
    defaultMode: 0440
    items:
      - {key: tls.crt, path: tls.crt}
      - {key: tls.key, path: tls.key}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "quatro.redisTlsMounts" -}}
{{- if include "quatro.redisTls" . }}
{{- if .Values.redis.external.tls.caSecret }}
- {name: redis-tls, mountPath: {{ include "quatro.redisTlsDir" . }}, readOnly: true}
{{- end }}
{{- if .Values.redis.external.tls.clientCertSecret }}
- {name: redis-client-cert, mountPath: {{ include "quatro.redisClientCertDir" . }}, readOnly: true}
{{- end }}
{{- end }}
{{- end -}}

{{/* Token authentication for one Ray process. KubeRay >= 1.6 injects the same two variables from
authOptions; setting them here too keeps a pod that the operator did not patch from starting a
Ray with no token (both name the same Secret and key, so they can only agree). */}}
{{- define "quatro.rayAuthEnv" -}}
- name: RAY_AUTH_MODE
  value: {{ .Values.ray.auth.mode | quote }}
{{- if eq .Values.ray.auth.mode "token" }}
- name: RAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "quatro.rayTokenSecret" . }}
      key: auth_token
{{- end }}
{{- end -}}

{{/* The environment every Quatro process shares: gateways and Ray nodes alike. HOME is on the
/tmp emptyDir because the root filesystem is read-only and Ray writes under ~ and /tmp. */}}
{{- define "quatro.env" -}}
- name: RAY_NAMESPACE
  value: {{ .Values.ray.namespace | quote }}
- name: QUATRO_TEST_HOOKS
  value: {{ ternary "1" "0" .Values.testHooks | quote }}
- name: HOME
  value: /tmp
{{ include "quatro.rayAuthEnv" . }}
{{- range $name, $value := .Values.ray.quietEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{/* /tmp (Ray's session dir, HOME) and /dev/shm (the object store: the runtime's default 64 MiB
is smaller than any store here, and Ray falls back to slow disk) as emptyDirs. */}}
{{- define "quatro.scratchVolumes" -}}
- name: tmp
  emptyDir: {}
- name: shm
  emptyDir:
    medium: Memory
    sizeLimit: {{ printf "%dMi" (add (div (int64 .objectStoreMemory) 1048576) 64) }}
{{- end -}}

{{- define "quatro.scratchMounts" -}}
- name: tmp
  mountPath: /tmp
- name: shm
  mountPath: /dev/shm
{{- end -}}

{{/* A Secret value that survives upgrades: reuse what the cluster already holds, else draw one. */}}
{{- define "quatro.keptSecret" -}}
{{- $existing := lookup "v1" "Secret" .ctx.Release.Namespace .name -}}
{{- if and $existing $existing.data (hasKey $existing.data .key) -}}
{{- index $existing.data .key -}}
{{- else -}}
{{- randAlphaNum 48 | b64enc -}}
{{- end -}}
{{- end -}}

{{/* Scheduling of one component: nodeSelector, tolerations, affinity, topology spread. */}}
{{- define "quatro.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The table actors' data-plane ports, "first-last" (ray.tablePorts), checked once here: the
NetworkPolicy and the Ray pods' QUATRO_TABLE_PORTS must agree. */}}
{{- define "quatro.tablePorts" -}}
{{- $range := splitList "-" .Values.ray.tablePorts -}}
{{- $first := index $range 0 | int -}}
{{- $last := index $range 1 | int -}}
{{- if or (gt $first $last) (gt $last 65535) (lt $first 1024) -}}
{{- fail (printf "ray.tablePorts %q: want first-last with 1024 <= first <= last <= 65535" .Values.ray.tablePorts) -}}
{{- end -}}
{{- dict "first" $first "last" $last | toJson -}}
{{- end -}}

{{/* The environment of the Ray nodes' containers only (ray.nodeEnv, ray.healthCheckEnv), beside
quatro.env. */}}
{{- define "quatro.rayNodeEnv" -}}
{{- range $name, $value := merge (dict) .Values.ray.nodeEnv .Values.ray.healthCheckEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}

{{- define "quatro.tablePortsEnv" -}}
{{- $ports := include "quatro.tablePorts" . | fromJson -}}
- name: QUATRO_TABLE_PORTS
  value: {{ printf "%d-%d" (int $ports.first) (int $ports.last) | quote }}
{{- end -}}

{{/* The players' options (loadtests/locustfile.py), the same on the Locust master and workers:
the master sends its own to the workers, but a worker reads some at its start. */}}
{{- define "quatro.locustPlayerArgs" -}}
{{- $lt := .Values.loadtest -}}
- --players={{ $lt.players }}
- --pace={{ $lt.pace }}
- --drop-rate={{ $lt.dropRate }}
{{- range $lt.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The pod-level settings of every Redis pod (standalone, cluster nodes, the cluster's
bootstrap): no service-account token (nothing in them calls the Kubernetes API), and the release's
high non-root uid instead of the official image's 999 (a uid that may be a real user on the node).
fsGroup makes the data volume that uid's group's, also for a volume written by the 999 of an
earlier release (once: OnRootMismatch skips the recursive change when the root already fits). */}}
{{- define "quatro.redisPodSecurity" -}}
automountServiceAccountToken: false
securityContext:
  {{- toYaml (merge (deepCopy .Values.podSecurityContext) (dict "fsGroupChangePolicy" "OnRootMismatch")) | nindent 2 }}
{{- end -}}

{{/* The Redis that keeps Ray's GCS state (GCS fault tolerance): the game's own in standalone
mode; in cluster mode the chart's standalone Redis, since Ray's GCS refuses a Redis Cluster of
more than one shard ("Ray currently doesn't support Redis Cluster with more than one shard", from
Ray 2.60's gcs_server; KubeRay documents standalone only). */}}
{{- define "quatro.gcsRedisAddress" -}}
{{- if include "quatro.redisCluster" . -}}
{{- printf "%s:6379" (include "quatro.redisName" .) -}}
{{- else -}}
{{- printf "%s%s:%s" (ternary "rediss://" "" (eq (include "quatro.redisTls" .) "true")) (include "quatro.redisHost" .) (include "quatro.redisPort" .) -}}
{{- end -}}
{{- end -}}

{{/* The head's GCS over TLS to an external standalone Redis: Ray's own variables for the CA and
the client certificate (rediss:// in the address turns TLS on). */}}
{{- define "quatro.gcsTlsEnv" -}}
{{- if and (include "quatro.redisTls" .) (not (include "quatro.redisCluster" .)) .Values.ray.gcsFaultTolerance.enabled }}
{{- with .Values.redis.external.tls }}
{{- if .caSecret }}
- name: RAY_REDIS_CA_CERT
  value: {{ printf "%s/ca.crt" (include "quatro.redisTlsDir" $) | quote }}
{{- end }}
{{- if .clientCertSecret }}
- name: RAY_REDIS_CLIENT_CERT
  value: {{ printf "%s/tls.crt" (include "quatro.redisClientCertDir" $) | quote }}
- name: RAY_REDIS_CLIENT_KEY
  value: {{ printf "%s/tls.key" (include "quatro.redisClientCertDir" $) | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
