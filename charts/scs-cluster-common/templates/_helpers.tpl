{{/*
Shared helpers. Every name comes from the values (scs-templates computes them from the
settings); the chart never derives a name except the spec hash of immutable templates.
*/}}

{{/*
Object metadata: name, namespace, the fixed labels, optional extra labels and annotations.
Context: dict root name [labels] [annotations].
*/}}
{{- define "scs.metadata" -}}
name: {{ .name }}
namespace: {{ .root.Values.cluster.namespace }}
labels:
  {{- toYaml (merge (dict) (.labels | default dict) .root.Values.labels) | nindent 2 }}
{{- with .annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
Name of an immutable template: "<base>-<first 8 hex of sha256(rendered spec)>". Any change
of the rendered spec (from settings or from the chart itself) gives a new name, which is what
makes Cluster API roll the machines; nothing else does. Context: dict base spec.
*/}}
{{- define "scs.hashedName" -}}
{{- printf "%s-%s" .base (.spec | sha256sum | trunc 8) -}}
{{- end -}}

{{/* Annotations of immutable templates: helm keeps old ones until CAPI finished rolling. */}}
{{- define "scs.keepAnnotations" -}}
helm.sh/resource-policy: keep
{{- end -}}

{{/*
A map as a kubeadm v1beta2 argument list ([{name, value}], sorted by name: Go templates
range over maps in key order). Values are strings; integers are printed without exponent.
*/}}
{{- define "scs.argList" -}}
{{- $args := list -}}
{{- range $name, $value := . -}}
{{- $args = append $args (dict "name" $name "value" (toString $value)) -}}
{{- end -}}
{{- toYaml $args -}}
{{- end -}}

{{/* An integer value as a decimal string (helm may hold JSON numbers as float64). */}}
{{- define "scs.int" -}}
{{- . | int64 | toString -}}
{{- end -}}

{{/* A reference to an object in another API group (v1beta2 contract refs). */}}
{{- define "scs.ref" -}}
apiGroup: {{ .apiGroup }}
kind: {{ .kind }}
name: {{ .name }}
{{- end -}}
