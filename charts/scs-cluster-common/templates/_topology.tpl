{{/*
The clusterclass template (values cluster.template = "clusterclass"): the cluster as a
Cluster API topology. Rendered instead of the classic objects by "scs.clusterApiObjects":

  ClusterClass <cluster.className>    one per provider and chart version: a new release
                                      ships a new class, existing clusters move onto it only
                                      when their settings are installed again
  its templates                       KubeadmControlPlaneTemplate, the infrastructure
                                      cluster template, one machine template and one
                                      KubeadmConfigTemplate per role
  Cluster (spec.topology)             version, control plane, one machineDeployment of class
                                      "worker" per worker group, and the variables

The class is a frame that never depends on a cluster's settings (its templates hold only
placeholders that satisfy the CRDs). Its patches copy variables into the objects the topology
controller creates, and the variables' values are rendered by the SAME named templates as the
classic objects (scs.controlPlaneBody, scs.kubeadmConfigSpec.worker, provider.machineSpec,
provider.infraClusterSpec): classic and topology clusters cannot drift apart. A Kubernetes
upgrade is a change of spec.topology.version (plus the image in the machine variables), a
worker group change a change of that group's variable overrides.

Extra provider hooks: provider.infraClusterSpec (spec of the infrastructure cluster, context
root), provider.classMachineSpec and provider.classClusterSpec (the class's placeholders).
*/}}

{{- define "scs.topologyObjects" -}}
{{- $root := . -}}
{{- $c := .Values.cluster -}}
{{- if or (not (hasKey $c "classObjects")) $c.classObjects }}
{{- include "scs.classObjects" (dict "root" $root "name" $c.className "namespace" $c.namespace) }}
---
{{ end -}}
{{ include "scs.topologyCluster" $root }}
{{- end -}}

{{/*
The ClusterClass and its templates. Context: dict root name namespace (the class's name and
namespace: nothing else of a cluster reaches the class). Rendered with the cluster (render,
the helmfile path) or alone in the class's own release (values "clusterClass", see
scs.clusterApiObjects): several clusters of a namespace share that release.
*/}}
{{- define "scs.classObjects" -}}
{{- include "scs.clusterClass" . }}
---
{{ include "scs.classKubeadmControlPlaneTemplate" . }}
---
{{ include "scs.classInfraClusterTemplate" . }}
---
{{ include "scs.classMachineTemplate" (dict "class" . "role" "control-plane") }}
---
{{ include "scs.classMachineTemplate" (dict "class" . "role" "worker") }}
---
{{ include "scs.classKubeadmConfigTemplate" . }}
{{- end -}}

{{/* The worker machineDeployment class every worker group uses. */}}
{{- define "scs.workerClass" -}}worker{{- end -}}

{{/* Metadata of class objects: shared by clusters, so no cluster label. Context: dict class name. */}}
{{- define "scs.classMetadata" -}}
name: {{ .name }}
namespace: {{ .class.namespace }}
labels:
  app.kubernetes.io/managed-by: Helm
  scs.community/cluster-class: {{ .class.name }}
{{- end -}}

{{/* Context: dict class role (role empty: the infrastructure cluster template). */}}
{{- define "scs.classTemplateName" -}}
{{- if .role -}}
{{- printf "%s-%s" .class.name .role -}}
{{- else -}}
{{- .class.name -}}
{{- end -}}
{{- end -}}

{{/* A templateRef of the class (v1beta2: apiVersion, kind, name). Context: dict apiVersion kind name. */}}
{{- define "scs.templateRef" -}}
templateRef:
  apiVersion: {{ .apiVersion }}
  kind: {{ .kind }}
  name: {{ .name }}
{{- end -}}

{{/* A variable whose value is a rendered spec (an object); context: dict name description. */}}
{{- define "scs.objectVariable" -}}
- name: {{ .name }}
  required: {{ .required }}
  schema:
    openAPIV3Schema:
      type: object
      x-kubernetes-preserve-unknown-fields: true
      description: {{ .description | quote }}
{{- end -}}

{{/* A patch that sets /spec/template/spec of the selected template from a variable. */}}
{{- define "scs.specPatch" -}}
- name: {{ .name }}
  definitions:
    - selector:
        apiVersion: {{ .apiVersion }}
        kind: {{ .kind }}
        matchResources:
          {{- toYaml .match | nindent 10 }}
      jsonPatches:
        - op: add
          path: /spec/template/spec
          valueFrom:
            variable: {{ .variable }}
{{- end -}}

{{- define "scs.clusterClass" -}}
{{- $class := . -}}
{{- $root := .root -}}
{{- $infra := include "provider.infraApiVersion" $root -}}
{{- $machineKind := include "provider.machineTemplateKind" $root -}}
{{- $clusterTemplateKind := printf "%sTemplate" (include "provider.infraClusterKind" $root) -}}
{{- $workers := dict "machineDeploymentClass" (dict "names" (list (include "scs.workerClass" $root))) -}}
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata:
  {{- include "scs.classMetadata" (dict "class" $class "name" $class.name) | nindent 2 }}
spec:
  controlPlane:
    {{- include "scs.templateRef" (dict "apiVersion" "controlplane.cluster.x-k8s.io/v1beta2" "kind" "KubeadmControlPlaneTemplate" "name" (include "scs.classTemplateName" (dict "class" $class "role" "control-plane"))) | nindent 4 }}
    machineInfrastructure:
      {{- include "scs.templateRef" (dict "apiVersion" $infra "kind" $machineKind "name" (include "scs.classTemplateName" (dict "class" $class "role" "control-plane"))) | nindent 6 }}
  infrastructure:
    {{- include "scs.templateRef" (dict "apiVersion" $infra "kind" $clusterTemplateKind "name" (include "scs.classTemplateName" (dict "class" $class))) | nindent 4 }}
  workers:
    machineDeployments:
      - class: {{ include "scs.workerClass" $root }}
        bootstrap:
          {{- include "scs.templateRef" (dict "apiVersion" "bootstrap.cluster.x-k8s.io/v1beta2" "kind" "KubeadmConfigTemplate" "name" (include "scs.classTemplateName" (dict "class" $class "role" "worker"))) | nindent 10 }}
        infrastructure:
          {{- include "scs.templateRef" (dict "apiVersion" $infra "kind" $machineKind "name" (include "scs.classTemplateName" (dict "class" $class "role" "worker"))) | nindent 10 }}
  variables:
    {{- include "scs.objectVariable" (dict "name" "controlPlane" "required" true "description" "KubeadmControlPlane spec (rollout, remediation, kubeadmConfigSpec), rendered by scs-templates from the cluster settings") | nindent 4 }}
    {{- include "scs.objectVariable" (dict "name" "controlPlaneMachine" "required" true "description" "spec of the control plane's infrastructure machines (machine type, image, disk, zone placement), rendered by scs-templates") | nindent 4 }}
    {{- include "scs.objectVariable" (dict "name" "infrastructureCluster" "required" true "description" "spec of the infrastructure cluster (network, API load balancer and access, zones), rendered by scs-templates") | nindent 4 }}
    {{- include "scs.objectVariable" (dict "name" "workerMachine" "required" false "description" "spec of a worker group's infrastructure machines; set per machineDeployment (variables.overrides)") | nindent 4 }}
    {{- include "scs.objectVariable" (dict "name" "workerBootstrap" "required" false "description" "KubeadmConfig spec of a worker group (kubelet, labels, taints, node files); set per machineDeployment (variables.overrides)") | nindent 4 }}
  patches:
    {{- include "scs.specPatch" (dict "name" "control-plane" "apiVersion" "controlplane.cluster.x-k8s.io/v1beta2" "kind" "KubeadmControlPlaneTemplate" "match" (dict "controlPlane" true) "variable" "controlPlane") | nindent 4 }}
    {{- include "scs.specPatch" (dict "name" "control-plane-machine" "apiVersion" $infra "kind" $machineKind "match" (dict "controlPlane" true) "variable" "controlPlaneMachine") | nindent 4 }}
    {{- include "scs.specPatch" (dict "name" "infrastructure-cluster" "apiVersion" $infra "kind" $clusterTemplateKind "match" (dict "infrastructureCluster" true) "variable" "infrastructureCluster") | nindent 4 }}
    {{- include "scs.specPatch" (dict "name" "worker-machine" "apiVersion" $infra "kind" $machineKind "match" $workers "variable" "workerMachine") | nindent 4 }}
    {{- include "scs.specPatch" (dict "name" "worker-bootstrap" "apiVersion" "bootstrap.cluster.x-k8s.io/v1beta2" "kind" "KubeadmConfigTemplate" "match" $workers "variable" "workerBootstrap") | nindent 4 }}
{{- end -}}

{{- define "scs.classKubeadmControlPlaneTemplate" -}}
apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata:
  {{- include "scs.classMetadata" (dict "class" . "name" (include "scs.classTemplateName" (dict "class" . "role" "control-plane"))) | nindent 2 }}
spec:
  template:
    spec:
      kubeadmConfigSpec:
        format: cloud-config  # placeholder: the class's patch sets the whole spec
{{- end -}}

{{- define "scs.classInfraClusterTemplate" -}}
apiVersion: {{ include "provider.infraApiVersion" .root }}
kind: {{ include "provider.infraClusterKind" .root }}Template
metadata:
  {{- include "scs.classMetadata" (dict "class" . "name" (include "scs.classTemplateName" (dict "class" .))) | nindent 2 }}
spec:
  template:
    spec:
      {{- include "provider.classClusterSpec" .root | nindent 6 }}
{{- end -}}

{{/* Context: dict class role. */}}
{{- define "scs.classMachineTemplate" -}}
apiVersion: {{ include "provider.infraApiVersion" .class.root }}
kind: {{ include "provider.machineTemplateKind" .class.root }}
metadata:
  {{- include "scs.classMetadata" (dict "class" .class "name" (include "scs.classTemplateName" .)) | nindent 2 }}
spec:
  template:
    spec:
      {{- include "provider.classMachineSpec" .class.root | nindent 6 }}
{{- end -}}

{{- define "scs.classKubeadmConfigTemplate" -}}
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  {{- include "scs.classMetadata" (dict "class" . "name" (include "scs.classTemplateName" (dict "class" . "role" "worker"))) | nindent 2 }}
spec:
  template:
    spec:
      format: cloud-config  # placeholder: the class's patch sets the whole spec
{{- end -}}

{{/* A topology variable (or override): name and a rendered object as value. */}}
{{- define "scs.topologyVariable" -}}
- name: {{ .name }}
  value:
    {{- .value | nindent 4 }}
{{- end -}}

{{- define "scs.topologyCluster" -}}
{{- $root := . -}}
{{- $v := .Values -}}
{{- $cp := $v.controlPlane -}}
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  {{- include "scs.metadata" (dict "root" $root "name" $v.cluster.name) | nindent 2 }}
spec:
  clusterNetwork:
    {{- include "scs.clusterNetwork" $root | nindent 4 }}
  topology:
    classRef:
      name: {{ $v.cluster.className }}
    version: {{ $v.kubernetes.version }}
    controlPlane:
      replicas: {{ include "scs.int" $cp.replicas }}
      metadata:
        labels:
          {{- toYaml $v.labels | nindent 10 }}
      {{- with $cp.rollout.deletion }}
      {{- include "scs.deletion" . | nindent 6 }}
      {{- end }}
      healthCheck:
        checks:
          {{- include "scs.healthChecks" $cp.healthCheck | nindent 10 }}
        {{- with include "scs.remediationStop" $cp.healthCheck }}{{ . | nindent 8 }}{{- end }}
    workers:
      machineDeployments:
        {{- range $group := $v.workers }}
        {{- $ctx := dict "root" $root "machine" $group "role" "worker" }}
        - class: {{ include "scs.workerClass" $root }}
          name: {{ $group.name }}
          {{- if $group.autoscaling }}
          metadata:
            annotations:
              {{- include "scs.autoscalerAnnotations" $group.autoscaling | nindent 14 }}
            labels:
              {{- toYaml (merge (dict) ($group.machineLabels | default dict) $v.labels) | nindent 14 }}
          {{- else }}
          replicas: {{ include "scs.int" $group.replicas }}
          metadata:
            labels:
              {{- toYaml (merge (dict) ($group.machineLabels | default dict) $v.labels) | nindent 14 }}
          {{- end }}
          {{- with $group.zone }}
          failureDomain: {{ . | quote }}
          {{- end }}
          {{- with $group.rollout.deletion }}
          {{- include "scs.deletion" . | nindent 10 }}
          {{- end }}
          rollout:
            strategy:
              type: RollingUpdate
              rollingUpdate:
                maxSurge: {{ include "scs.int" $group.rollout.maxSurge }}
                maxUnavailable: {{ include "scs.int" $group.rollout.maxUnavailable }}
          healthCheck:
            checks:
              {{- include "scs.healthChecks" $group.healthCheck | nindent 14 }}
            {{- with include "scs.remediationStop" $group.healthCheck }}{{ . | nindent 12 }}{{- end }}
          variables:
            overrides:
              {{- include "scs.topologyVariable" (dict "name" "workerBootstrap" "value" (include "scs.kubeadmConfigSpec.worker" $ctx)) | nindent 14 }}
              {{- include "scs.topologyVariable" (dict "name" "workerMachine" "value" (include "provider.machineSpec" $ctx)) | nindent 14 }}
        {{- end }}
    variables:
      {{- include "scs.topologyVariable" (dict "name" "controlPlane" "value" (include "scs.controlPlaneBody" $root)) | nindent 6 }}
      {{- include "scs.topologyVariable" (dict "name" "controlPlaneMachine" "value" (include "provider.machineSpec" (dict "root" $root "machine" $cp "role" "control-plane"))) | nindent 6 }}
      {{- include "scs.topologyVariable" (dict "name" "infrastructureCluster" "value" (include "provider.infraClusterSpec" $root)) | nindent 6 }}
{{- end -}}
