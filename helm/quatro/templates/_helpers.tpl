{{- define "quatro.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "quatro.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "quatro.image" -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end -}}

{{- define "quatro.redisUrl" -}}
{{- if .Values.redis.enabled -}}
redis://{{ include "quatro.fullname" . }}-redis:6379/0
{{- else -}}
{{ required "redis.url is required when redis.enabled is false" .Values.redis.url }}
{{- end -}}
{{- end -}}

{{/* The environment every Quatro process shares: gateways and Ray nodes alike. */}}
{{- define "quatro.env" -}}
- name: REDIS_URL
  value: {{ include "quatro.redisUrl" . | quote }}
- name: RAY_NAMESPACE
  value: {{ .Values.ray.namespace | quote }}
- name: RAY_AUTH_MODE
  value: {{ .Values.ray.authMode | quote }}
- name: QUATRO_TEST_HOOKS
  value: {{ ternary "1" "0" .Values.testHooks | quote }}
{{- range $name, $value := .Values.ray.quietEnv }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end -}}
