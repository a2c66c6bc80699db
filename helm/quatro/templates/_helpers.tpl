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

{{/* Where Redis is, for humans: never with the password. */}}
{{- define "quatro.redisDisplayUrl" -}}
redis://{{ include "quatro.redisHost" . }}:{{ include "quatro.redisPort" . }}/{{ include "quatro.redisDb" . }}
{{- end -}}

{{/* REDIS_PASSWORD from the Secret, then REDIS_URL built from it by Kubernetes itself ($(VAR) is
expanded from variables defined earlier in the same list), so the password is in no manifest. */}}
{{- define "quatro.redisEnv" -}}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "quatro.redisSecret" . }}
      key: {{ .Values.redis.auth.existingSecretKey }}
- name: REDIS_URL
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s:%s/%s" (include "quatro.redisHost" .) (include "quatro.redisPort" .) (include "quatro.redisDb" .) | quote }}
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

{{/* The environment of the Ray nodes' containers only (ray.nodeEnv), beside quatro.env. */}}
{{- define "quatro.rayNodeEnv" -}}
{{- range $name, $value := .Values.ray.nodeEnv }}
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
