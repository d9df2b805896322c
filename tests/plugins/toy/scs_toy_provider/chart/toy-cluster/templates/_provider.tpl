{{/* The provider hooks the library chart calls (scs-cluster-common/templates/_objects.tpl). */}}
{{- define "provider.infraApiVersion" -}}infrastructure.cluster.x-k8s.io/v1beta2{{- end -}}
{{- define "provider.infraClusterKind" -}}DevCluster{{- end -}}
{{- define "provider.machineTemplateKind" -}}DevMachineTemplate{{- end -}}

{{- define "provider.machineSpec" -}}
backend:
  inMemory:
    vm:
      provisioning:
        startupDuration: {{ required "toy.vmStartup" .root.Values.toy.vmStartup | quote }}
{{- end -}}

{{- define "provider.infraClusterSpec" -}}
backend:
  inMemory: {}
{{- end -}}
{{- define "provider.classMachineSpec" -}}
backend:
  inMemory: {}
{{- end -}}
{{- define "provider.classClusterSpec" -}}
backend:
  inMemory: {}
{{- end -}}
