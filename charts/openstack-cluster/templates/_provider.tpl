{{/*
Provider hooks called by the library chart (see scs-cluster-common/templates/_objects.tpl).
*/}}
{{- define "provider.infraApiVersion" -}}infrastructure.cluster.x-k8s.io/v1beta1{{- end -}}
{{- define "provider.infraClusterKind" -}}OpenStackCluster{{- end -}}
{{- define "provider.machineTemplateKind" -}}OpenStackMachineTemplate{{- end -}}

{{/*
spec.template.spec of an OpenStackMachineTemplate. Everything here is part of the template
name's hash: a new flavor, image (hence Kubernetes version), disk or server group rolls the
machines of that group only. Context: dict root machine role.
*/}}
{{- define "provider.machineSpec" -}}
{{- $os := .root.Values.openstack -}}
{{- $m := .machine -}}
{{- $metadata := ternary $os.serverMetadata.controlPlane $os.serverMetadata.workers (eq .role "control-plane") -}}
flavor: {{ $m.machineType | quote }}
image:
  filter:
    name: {{ $m.image | quote }}
{{- if gt (int64 $m.rootDiskGB) 0 }}
rootVolume:
  sizeGiB: {{ include "scs.int" $m.rootDiskGB }}
{{- end }}
{{- with $m.serverGroup }}
serverGroup:
  filter:
    name: {{ . | quote }}
{{- end }}
{{- with $metadata }}
serverMetadata:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $os.sshKeyName }}
sshKeyName: {{ . | quote }}
{{- end }}
{{- end -}}
