{{/* The labels of every object of this chart. */}}
{{- define "scs-metadata-policy.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Calico: the tier of the policy (its own, evaluated before the default tier). */}}
{{- define "scs-metadata-policy.tier" -}}
scs-metadata
{{- end }}
