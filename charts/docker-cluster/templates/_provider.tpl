{{/*
Provider hooks called by the library chart (see scs-cluster-common/templates/_objects.tpl).
CAPD runs nodes as containers on the management host: development and tests only.
*/}}
{{- define "provider.infraApiVersion" -}}infrastructure.cluster.x-k8s.io/v1beta2{{- end -}}
{{- define "provider.infraClusterKind" -}}DockerCluster{{- end -}}
{{- define "provider.machineTemplateKind" -}}DockerMachineTemplate{{- end -}}

{{/*
spec.template.spec of a DockerMachineTemplate: the kind node image of the Kubernetes
version (part of the name hash, so a version change rolls every group) and the docker
socket, as the CAPD quickstart mounts it. Context: dict root machine role.
*/}}
{{- define "provider.machineSpec" -}}
customImage: {{ .machine.image | quote }}
extraMounts:
  - containerPath: /var/run/docker.sock
    hostPath: /var/run/docker.sock
{{- end -}}

{{/* spec of the DockerCluster (classic) or of the class's DockerClusterTemplate patch
(clusterclass): nothing to set. Context: root. */}}
{{- define "provider.infraClusterSpec" -}}{}{{- end -}}

{{/*
Placeholders of the ClusterClass's own templates: the class's patches replace the whole
spec from the cluster's variables (scs-cluster-common/templates/_topology.tpl).
*/}}
{{- define "provider.classMachineSpec" -}}{}{{- end -}}
{{- define "provider.classClusterSpec" -}}{}{{- end -}}
