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
  {{- with $m.rootDiskType }}
  type: {{ . | quote }}
  {{- end }}
{{- end }}
{{- with $m.etcdVolume }}
additionalBlockDevices:
  - name: etcd
    sizeGiB: {{ include "scs.int" .sizeGiB }}
    storage:
      type: Volume
      {{- with .type }}
      volume:
        type: {{ . | quote }}
      {{- end }}
{{- end }}
{{- with $m.extraNetworks }}
{{- /* the first port stays on the cluster network (a port without network is CAPO's
       default network); then one port per extra network */}}
ports:
  - {}
  {{- range . }}
  - network:
      {{- toYaml . | nindent 6 }}
  {{- end }}
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

{{/* spec of the OpenStackCluster (classic) or of the class's OpenStackClusterTemplate patch
(clusterclass). Context: root. */}}
{{- define "provider.infraClusterSpec" -}}
identityRef:
  type: Secret
  name: {{ $.Values.openstack.credentials.secretName }}
  cloudName: {{ $.Values.openstack.cloud | quote }}
{{- with $.Values.openstack.externalNetworkID }}
externalNetwork:
  id: {{ . | quote }}
{{- end }}
{{- /* Without externalNetwork CAPO uses the one external network (KaaS v1 auto-detect). */}}
{{- with $.Values.openstack.existingNetwork }}
network:
  {{- toYaml .network | nindent 2 }}
{{- with .subnets }}
subnets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- else }}
managedSubnets:
  - cidr: {{ $.Values.network.nodeCIDR | quote }}
    dnsNameservers: {{ toJson $.Values.network.dnsServers }}
{{- if gt (int64 $.Values.network.mtu) 0 }}
networkMTU: {{ include "scs.int" $.Values.network.mtu }}
{{- end }}
{{- end }}
{{- if not $.Values.openstack.apiFloatingIP }}
disableAPIServerFloatingIP: true
{{- end }}
managedSecurityGroups:
  allowAllInClusterTraffic: true
  {{- with $.Values.openstack.nodeSecurityGroupRules }}
  allNodesSecurityGroupRules:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $.Values.openstack.apiSecurityGroupRules }}
  {{- /* apiAccess on ovn: the API port from the allowed sources only (see
         scs_templates/values/api_access.py for why the port is not 6443). */}}
  controlPlaneNodesSecurityGroupRules:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- if ne (int64 $.Values.network.apiServerPort) 6443 }}
apiServerPort: {{ include "scs.int" $.Values.network.apiServerPort }}
{{- end }}
apiServerLoadBalancer:
  enabled: true
  provider: {{ $.Values.openstack.loadBalancerProvider | quote }}
  {{- with $.Values.network.apiAllowedCIDRs }}
  allowedCIDRs: {{ toJson . }}
  {{- end }}
{{- with $.Values.controlPlane.zones }}
controlPlaneAvailabilityZones: {{ toJson . }}
{{- end }}
{{- end -}}

{{/*
Placeholders of the ClusterClass's own templates: the class's patches replace the whole
spec from the cluster's variables (scs-cluster-common/templates/_topology.tpl), these only
satisfy the CRDs' required fields and are never what a machine or network is built from.
*/}}
{{- define "provider.classMachineSpec" -}}
flavor: set-by-clusterclass-patch
image:
  filter:
    name: set-by-clusterclass-patch
{{- end -}}
{{- define "provider.classClusterSpec" -}}
identityRef:
  type: Secret
  name: set-by-clusterclass-patch
  cloudName: set-by-clusterclass-patch
{{- end -}}
