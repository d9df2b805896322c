{{/*
Provider hooks called by the library chart (see scs-cluster-common/templates/_objects.tpl).
CAPD's in-memory backend simulates the VM, the node, etcd and the API server of each machine;
the startup durations keep a rollout observable but short; the VM's comes from the values
(inMemory.vmStartup, tests/support/inmemory.py: InMemoryProvider; "24h" keeps a cluster Provisioning).
*/}}
{{- define "provider.infraApiVersion" -}}infrastructure.cluster.x-k8s.io/v1beta2{{- end -}}
{{- define "provider.infraClusterKind" -}}DevCluster{{- end -}}
{{- define "provider.machineTemplateKind" -}}DevMachineTemplate{{- end -}}

{{- define "provider.machineSpec" -}}
backend:
  inMemory:
    vm:
      provisioning:
        startupDuration: {{ required "inMemory.vmStartup (tests/support/inmemory.py)" .root.Values.inMemory.vmStartup | quote }}
    node:
      provisioning:
        startupDuration: 1s
    apiServer:
      provisioning:
        startupDuration: 1s
    etcd:
      provisioning:
        startupDuration: 1s
{{- end -}}

{{/* clusterclass template: the DevCluster spec (classic and the class's patch) and the
placeholders of the class's own templates (the patches replace them from the variables). */}}
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
