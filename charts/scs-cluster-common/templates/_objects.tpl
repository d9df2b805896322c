{{/*
The provider-independent Cluster API objects (core and kubeadm, v1beta2).

A provider chart renders them all with

    {{ include "scs.clusterApiObjects" . }}

and defines these hooks (named templates, context: dict root machine role):
  provider.infraApiVersion        apiVersion of its infrastructure kinds
  provider.infraClusterKind       e.g. OpenStackCluster
  provider.machineTemplateKind    e.g. OpenStackMachineTemplate
  provider.machineSpec            the machine template's spec.template.spec (YAML)
"machine" is .Values.controlPlane or one entry of .Values.workers; "role" is
"control-plane" or "worker". With cluster.template "clusterclass" the topology objects are
rendered instead (_topology.tpl, which needs three more hooks). With values "clusterClass"
(name, namespace) and nothing of a cluster, the release of a ClusterClass: the class and its
templates only, shared by the topology clusters of that namespace.
*/}}

{{- define "scs.clusterApiObjects" -}}
{{- $root := . -}}
{{- if .Values.clusterClass -}}
{{- include "scs.classObjects" (dict "root" $root "name" .Values.clusterClass.name "namespace" .Values.clusterClass.namespace) }}
{{- else if eq .Values.cluster.template "clusterclass" -}}
{{- include "scs.topologyObjects" $root }}
{{- else -}}
{{- include "scs.cluster" $root }}
---
{{- $cpInfra := include "scs.machineTemplateName" (dict "root" $root "machine" .Values.controlPlane "role" "control-plane") }}
{{ include "scs.machineTemplate" (dict "root" $root "machine" .Values.controlPlane "role" "control-plane") }}
---
{{ include "scs.kubeadmControlPlane" (dict "root" $root "infraName" $cpInfra) }}
---
{{ include "scs.controlPlaneHealthCheck" $root }}
{{- range $group := .Values.workers }}
{{- $ctx := dict "root" $root "machine" $group "role" "worker" }}
---
{{ include "scs.machineTemplate" $ctx }}
---
{{ include "scs.kubeadmConfigTemplate" $ctx }}
---
{{ include "scs.machineDeployment" $ctx }}
---
{{ include "scs.workerHealthCheck" $ctx }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Cluster.spec.clusterNetwork (classic and topology clusters). Context: root. */}}
{{- define "scs.clusterNetwork" -}}
pods:
  cidrBlocks: {{ toJson .Values.network.podCIDRs }}
services:
  cidrBlocks: {{ toJson .Values.network.serviceCIDRs }}
serviceDomain: {{ .Values.network.serviceDomain | quote }}
{{- end -}}

{{- define "scs.cluster" -}}
{{- $v := .Values -}}
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  {{- include "scs.metadata" (dict "root" . "name" $v.cluster.name) | nindent 2 }}
spec:
  clusterNetwork:
    {{- include "scs.clusterNetwork" . | nindent 4 }}
  controlPlaneRef:
    {{- include "scs.ref" (dict "apiGroup" "controlplane.cluster.x-k8s.io" "kind" "KubeadmControlPlane" "name" $v.controlPlane.name) | nindent 4 }}
  infrastructureRef:
    {{- include "scs.ref" (dict "apiGroup" "infrastructure.cluster.x-k8s.io" "kind" (include "provider.infraClusterKind" .) "name" $v.cluster.infraName) | nindent 4 }}
{{- end -}}

{{/* Machine templates: immutable, named after the hash of their rendered spec. */}}
{{- define "scs.machineTemplateName" -}}
{{- include "scs.hashedName" (dict "base" .machine.templateBase "spec" (include "provider.machineSpec" .)) -}}
{{- end -}}

{{- define "scs.machineTemplate" -}}
apiVersion: {{ include "provider.infraApiVersion" .root }}
kind: {{ include "provider.machineTemplateKind" .root }}
metadata:
  {{- include "scs.metadata" (dict "root" .root "name" (include "scs.machineTemplateName" .) "annotations" (include "scs.keepAnnotations" . | fromYaml)) | nindent 2 }}
spec:
  template:
    spec:
      {{- include "provider.machineSpec" . | nindent 6 }}
{{- end -}}

{{/* kubelet arguments of a node: the provider's flags plus the group's node labels. */}}
{{- define "scs.kubeletArgs" -}}
{{- $args := deepCopy .root.Values.kubelet.extraArgs -}}
{{- $labels := list -}}
{{- range $key, $value := (.machine.nodeLabels | default dict) -}}
{{- $labels = append $labels (printf "%s=%s" $key $value) -}}
{{- end -}}
{{- if $labels -}}
{{- $_ := set $args "node-labels" (join "," $labels) -}}
{{- end -}}
{{- include "scs.argList" $args -}}
{{- end -}}

{{/* A node's kubeadm nodeRegistration body (kubelet flags, node name, taints), empty when it
has none: a provider without kubelet flags renders no nodeRegistration (the CRDs refuse an
empty kubeletExtraArgs list and an empty nodeRegistration). */}}
{{- define "scs.nodeRegistration" -}}
{{- if ne .kubelet "[]" }}
kubeletExtraArgs:
  {{- .kubelet | nindent 2 }}
{{- end }}
{{- with .root.Values.kubelet.nodeName }}
name: {{ . | quote }}
{{- end }}
{{- with .taints }}
taints:
  {{- range . }}
  - key: {{ .key | quote }}
    {{- if .value }}
    value: {{ .value | quote }}
    {{- end }}
    effect: {{ .effect }}
  {{- end }}
{{- end }}
{{- end -}}

{{- define "scs.kubeadmControlPlane" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $cp := $v.controlPlane -}}
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlane
metadata:
  {{- include "scs.metadata" (dict "root" $root "name" $cp.name) | nindent 2 }}
spec:
  replicas: {{ include "scs.int" $cp.replicas }}
  version: {{ $v.kubernetes.version }}
  machineTemplate:
    metadata:
      labels:
        {{- toYaml $v.labels | nindent 8 }}
    spec:
      infrastructureRef:
        {{- include "scs.ref" (dict "apiGroup" "infrastructure.cluster.x-k8s.io" "kind" (include "provider.machineTemplateKind" $root) "name" .infraName) | nindent 8 }}
      {{- with $cp.rollout.deletion }}
      {{- include "scs.deletion" . | nindent 6 }}
      {{- end }}
  {{- include "scs.controlPlaneBody" $root | nindent 2 }}
{{- end -}}

{{/*
spec of a KubeadmControlPlane without replicas, version and machineTemplate (those
differ between a classic KubeadmControlPlane and a topology one): rollout, remediation and
the kubeadm config. The ClusterClass template passes it as a variable. Context: root.
*/}}
{{- define "scs.controlPlaneBody" -}}
{{- $root := . -}}
{{- $v := $root.Values -}}
{{- $cp := $v.controlPlane -}}
{{- $kubelet := include "scs.kubeletArgs" (dict "root" $root "machine" $cp) -}}
{{- $apiArgs := dict
  "admission-control-config-file" (printf "%s/admission-config.yaml" (include "scs.admissionDir" $root))
  "enable-admission-plugins" "NodeRestriction,EventRateLimit"
  "max-requests-inflight" (include "scs.int" $v.apiServer.maxRequestsInflight)
  "max-mutating-requests-inflight" (include "scs.int" $v.apiServer.maxMutatingRequestsInflight)
  "min-request-timeout" (include "scs.int" $v.apiServer.minRequestTimeout)
-}}
{{- $audit := $v.apiServer.audit -}}
{{- if $audit.enabled -}}
{{- $apiArgs = merge $apiArgs (dict
  "audit-policy-file" (printf "%s/policy.yaml" (include "scs.auditPolicyDir" $root))
  "audit-log-path" (printf "%s/audit.log" (include "scs.auditLogDir" $root))
  "audit-log-maxage" (include "scs.int" $audit.maxAgeDays)
  "audit-log-maxbackup" (include "scs.int" $audit.maxBackups)
  "audit-log-maxsize" (include "scs.int" $audit.maxSizeMB)
) -}}
{{- end -}}
{{- if $v.apiServer.authentication -}}
{{- $_ := set $apiArgs "authentication-config" (printf "%s/config.yaml" (include "scs.authenticationDir" $root)) -}}
{{- end -}}
{{- if $v.apiServer.encryption.enabled -}}
{{- $_ := set $apiArgs "encryption-provider-config" (include "scs.encryptionConfigPath" $root) -}}
{{- end -}}
{{- $etcdArgs := dict
  "heartbeat-interval" (include "scs.int" $v.etcd.heartbeatInterval)
  "election-timeout" (include "scs.int" $v.etcd.electionTimeout)
  "auto-compaction-mode" "periodic"
  "auto-compaction-retention" $v.etcd.autoCompactionRetention
  "snapshot-count" (include "scs.int" $v.etcd.snapshotCount)
  "quota-backend-bytes" (include "scs.int" $v.etcd.quotaBackendBytes)
-}}
rollout:
  before:
    certificatesExpiryDays: {{ include "scs.int" $cp.certificateExpiryDays }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: {{ include "scs.int" $cp.rollout.maxSurge }}
remediation:
  maxRetry: {{ include "scs.int" $cp.remediationMaxRetry }}
kubeadmConfigSpec:
  clusterConfiguration:
    apiServer:
      {{- with $v.apiServer.certSANs }}
      certSANs: {{ toJson . }}
      {{- end }}
      extraArgs:
        {{- include "scs.argList" $apiArgs | nindent 8 }}
      extraVolumes:
        - name: admission-config
          hostPath: {{ include "scs.admissionDir" $root }}
          mountPath: {{ include "scs.admissionDir" $root }}
          pathType: DirectoryOrCreate
          readOnly: true
        {{- if $audit.enabled }}
        - name: audit-policy
          hostPath: {{ include "scs.auditPolicyDir" $root }}
          mountPath: {{ include "scs.auditPolicyDir" $root }}
          pathType: DirectoryOrCreate
          readOnly: true
        - name: audit-logs
          hostPath: {{ include "scs.auditLogDir" $root }}
          mountPath: {{ include "scs.auditLogDir" $root }}
          pathType: DirectoryOrCreate
        {{- end }}
        {{- if $v.apiServer.authentication }}
        - name: authentication-config
          hostPath: {{ include "scs.authenticationDir" $root }}
          mountPath: {{ include "scs.authenticationDir" $root }}
          pathType: DirectoryOrCreate
          readOnly: true
        {{- end }}
        {{- if $v.apiServer.encryption.enabled }}
        - name: encryption-config
          hostPath: {{ include "scs.encryptionDir" $root }}
          mountPath: {{ include "scs.encryptionDir" $root }}
          pathType: DirectoryOrCreate
          readOnly: true
        {{- end }}
    etcd:
      local:
        extraArgs:
          {{- include "scs.argList" $etcdArgs | nindent 10 }}
  initConfiguration:
    {{- if ne (int64 $v.network.apiServerPort) 6443 }}
    localAPIEndpoint:
      bindPort: {{ include "scs.int" $v.network.apiServerPort }}
    {{- end }}
    {{- with include "scs.nodeRegistration" (dict "root" $root "kubelet" $kubelet) | trim }}
    nodeRegistration:
      {{- . | nindent 6 }}
    {{- end }}
    patches:
      directory: {{ include "scs.kubeletPatchPath" $root }}
  joinConfiguration:
    {{- if ne (int64 $v.network.apiServerPort) 6443 }}
    controlPlane:
      localAPIEndpoint:
        bindPort: {{ include "scs.int" $v.network.apiServerPort }}
    {{- end }}
    {{- with include "scs.nodeRegistration" (dict "root" $root "kubelet" $kubelet) | trim }}
    nodeRegistration:
      {{- . | nindent 6 }}
    {{- end }}
    patches:
      directory: {{ include "scs.kubeletPatchPath" $root }}
  files:
    {{- include "scs.nodeFiles" $root | nindent 4 }}
    {{- include "scs.controlPlaneFiles" $root | nindent 4 }}
  {{- $setup := eq (include "scs.nodeSetupNeeded" $root) "true" }}
  {{- if or $v.etcd.unsafeFS $setup (gt (int64 $v.etcd.dataDiskGiB) 0) }}
  preKubeadmCommands:
    {{- if gt (int64 $v.etcd.dataDiskGiB) 0 }}
    # etcd on its own volume: found by its size (its device name depends on the disk bus),
    # formatted once, mounted at /var/lib/etcd before kubeadm runs
    - /usr/local/sbin/scs-etcd-disk.sh
    {{- end }}
    {{- if $setup }}
    - /usr/local/sbin/scs-node-setup.sh
    {{- end }}
    {{- if $v.etcd.unsafeFS }}
    # etcd.unsafeFS: faster fsync on network disks, at the risk of a corrupt member on power
    # loss. A unit (not a one-off mount) so that the remount survives reboots.
    - systemctl daemon-reload
    - systemctl enable --now etcd-unsafe-fs.service
    {{- end }}
  {{- end }}
  postKubeadmCommands:
    - systemctl daemon-reload
    - systemctl enable --now etcd-priority.timer
    {{- if $v.etcd.defrag.enabled }}
    - systemctl enable --now etcd-defrag.timer
    {{- end }}
{{- end -}}

{{/* The worker bootstrap spec: what kubeadm join and cloud-init do on a worker. */}}
{{- define "scs.kubeadmConfigSpec.worker" -}}
joinConfiguration:
  {{- with include "scs.nodeRegistration" (dict "root" .root "kubelet" (include "scs.kubeletArgs" .) "taints" .machine.taints) | trim }}
  nodeRegistration:
    {{- . | nindent 4 }}
  {{- end }}
  patches:
    directory: {{ include "scs.kubeletPatchPath" .root }}
files:
  {{- include "scs.nodeFiles" .root | nindent 2 }}
{{- if eq (include "scs.nodeSetupNeeded" .root) "true" }}
preKubeadmCommands:
  - /usr/local/sbin/scs-node-setup.sh
{{- end }}
{{- end -}}

{{- define "scs.kubeadmConfigTemplateName" -}}
{{- include "scs.hashedName" (dict "base" .machine.templateBase "spec" (include "scs.kubeadmConfigSpec.worker" .)) -}}
{{- end -}}

{{- define "scs.kubeadmConfigTemplate" -}}
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  {{- include "scs.metadata" (dict "root" .root "name" (include "scs.kubeadmConfigTemplateName" .) "annotations" (include "scs.keepAnnotations" . | fromYaml)) | nindent 2 }}
spec:
  template:
    spec:
      {{- include "scs.kubeadmConfigSpec.worker" . | nindent 6 }}
{{- end -}}

{{- /* The cluster-autoscaler's annotations of an autoscaled group's MachineDeployment (a
topology group's metadata reaches its MachineDeployment alike): min and max size, and for a
group that scales from zero the labels and taints of its future nodes, which the autoscaler
cannot learn from a node (cloudprovider/clusterapi README, "Scale from zero"). */ -}}
{{- define "scs.autoscalerAnnotations" -}}
{{- $annotations := dict "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size" (include "scs.int" .min) "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size" (include "scs.int" .max) -}}
{{- with .scaleFromZero -}}
{{- with .labels -}}{{- $_ := set $annotations "capacity.cluster-autoscaler.kubernetes.io/labels" . -}}{{- end -}}
{{- with .taints -}}{{- $_ := set $annotations "capacity.cluster-autoscaler.kubernetes.io/taints" . -}}{{- end -}}
{{- end -}}
{{- toYaml $annotations -}}
{{- end -}}

{{- define "scs.machineDeployment" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $g := .machine -}}
{{- $selector := dict "cluster.x-k8s.io/cluster-name" $v.cluster.name "cluster.x-k8s.io/deployment-name" $g.deploymentName -}}
{{- $annotations := dict -}}
{{- with $g.autoscaling -}}
{{- $annotations = include "scs.autoscalerAnnotations" . | fromYaml -}}
{{- end -}}
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  {{- include "scs.metadata" (dict "root" $root "name" $g.deploymentName "annotations" $annotations) | nindent 2 }}
spec:
  clusterName: {{ $v.cluster.name }}
  {{- if not $g.autoscaling }}
  replicas: {{ include "scs.int" $g.replicas }}
  {{- end }}
  selector:
    matchLabels:
      {{- toYaml $selector | nindent 6 }}
  rollout:
    strategy:
      type: RollingUpdate
      rollingUpdate:
        maxSurge: {{ include "scs.int" $g.rollout.maxSurge }}
        maxUnavailable: {{ include "scs.int" $g.rollout.maxUnavailable }}
  template:
    metadata:
      labels:
        {{- toYaml (merge (dict) $selector ($g.machineLabels | default dict) $v.labels) | nindent 8 }}
    spec:
      clusterName: {{ $v.cluster.name }}
      version: {{ $v.kubernetes.version }}
      {{- with $g.zone }}
      failureDomain: {{ . | quote }}
      {{- end }}
      {{- with $g.rollout.deletion }}
      {{- include "scs.deletion" . | nindent 6 }}
      {{- end }}
      bootstrap:
        configRef:
          {{- include "scs.ref" (dict "apiGroup" "bootstrap.cluster.x-k8s.io" "kind" "KubeadmConfigTemplate" "name" (include "scs.kubeadmConfigTemplateName" .)) | nindent 10 }}
      infrastructureRef:
        {{- include "scs.ref" (dict "apiGroup" "infrastructure.cluster.x-k8s.io" "kind" (include "provider.machineTemplateKind" $root) "name" (include "scs.machineTemplateName" .)) | nindent 8 }}
{{- end -}}

{{/*
Machine deletion timeouts (drain, volume detach, node deletion); only the ones set, the
others keep Cluster API's defaults. Context: a non-empty rollout.deletion of the values.
*/}}
{{- define "scs.deletion" -}}
deletion:
  {{- range $key, $seconds := . }}
  {{ $key }}: {{ include "scs.int" $seconds }}
  {{- end }}
{{- end -}}

{{/*
Node checks shared by all health checks: a node that does not join in time, or that is not
Ready for unhealthyTimeoutSeconds, is replaced. Context: a healthCheck of the values.
*/}}
{{- define "scs.healthChecks" -}}
nodeStartupTimeoutSeconds: {{ include "scs.int" .nodeStartupTimeoutSeconds }}
unhealthyNodeConditions:
  - type: Ready
    status: Unknown
    timeoutSeconds: {{ include "scs.int" .unhealthyTimeoutSeconds }}
  - type: Ready
    status: "False"
    timeoutSeconds: {{ include "scs.int" .unhealthyTimeoutSeconds }}
{{- end -}}

{{/*
The share of unhealthy machines above which a health check stops remediating, when the
healthCheck of the values has maxUnhealthyPercent (workers always, the control plane when
set); empty otherwise (callers indent it only when there is one). Context: a healthCheck
of the values.
*/}}
{{- define "scs.remediationStop" -}}
{{- if hasKey . "maxUnhealthyPercent" -}}
remediation:
  triggerIf:
    unhealthyLessThanOrEqualTo: {{ printf "%s%%" (include "scs.int" .maxUnhealthyPercent) }}
{{- end }}
{{- end -}}

{{/*
Control-plane health check: KubeadmControlPlane remediates (one machine at a time, never
when etcd would lose quorum, at most remediation.maxRetry times). With maxUnhealthyPercent
set, the health check also stops remediation when more than that share of the control plane
is unhealthy (the Cluster API health check's own stop, as for workers); unset, no
remediation stanza (Cluster API's default, 100%), as always rendered.
*/}}
{{- define "scs.controlPlaneHealthCheck" -}}
{{- $v := .Values -}}
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  {{- include "scs.metadata" (dict "root" . "name" $v.controlPlane.name) | nindent 2 }}
spec:
  clusterName: {{ $v.cluster.name }}
  selector:
    matchLabels:
      cluster.x-k8s.io/cluster-name: {{ $v.cluster.name }}
      cluster.x-k8s.io/control-plane: ""
  checks:
    {{- include "scs.healthChecks" $v.controlPlane.healthCheck | nindent 4 }}
  {{- with include "scs.remediationStop" $v.controlPlane.healthCheck }}{{ . | nindent 2 }}{{- end }}
{{- end -}}

{{/*
Worker health check: remediation stops when more than maxUnhealthyPercent (default 40%) of
the group is unhealthy (then the cause is likely not the machines: a broken image, network
or cloud outage).
*/}}
{{- define "scs.workerHealthCheck" -}}
{{- $v := .root.Values -}}
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  {{- include "scs.metadata" (dict "root" .root "name" .machine.deploymentName) | nindent 2 }}
spec:
  clusterName: {{ $v.cluster.name }}
  selector:
    matchLabels:
      cluster.x-k8s.io/cluster-name: {{ $v.cluster.name }}
      cluster.x-k8s.io/deployment-name: {{ .machine.deploymentName }}
  checks:
    {{- include "scs.healthChecks" .machine.healthCheck | nindent 4 }}
  {{- with include "scs.remediationStop" .machine.healthCheck }}{{ . | nindent 2 }}{{- end }}
{{- end -}}
