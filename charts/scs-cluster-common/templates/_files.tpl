{{/*
Files written by kubeadm bootstrap (cloud-init or CAPD) on the nodes. Each helper returns
YAML list items (possibly none) so that lists can be concatenated.
*/}}

{{- define "scs.kubeletPatchPath" -}}/etc/kubernetes/patches{{- end -}}
{{- define "scs.admissionDir" -}}/etc/kubernetes/admission{{- end -}}
{{- define "scs.auditPolicyDir" -}}/etc/kubernetes/audit{{- end -}}
{{- define "scs.auditLogDir" -}}/var/log/kubernetes/audit{{- end -}}
{{- define "scs.authenticationDir" -}}/etc/kubernetes/authentication{{- end -}}
{{- define "scs.encryptionDir" -}}/etc/kubernetes/encryption{{- end -}}
{{- define "scs.encryptionConfigPath" -}}{{ include "scs.encryptionDir" . }}/config.yaml{{- end -}}

{{/*
Files on every node: the KubeletConfiguration patch (serving certificates signed by the
cluster CA, so metrics-server needs no --kubelet-insecure-tls; anonymous access off) and one
containerd hosts.toml per registry mirror. Context: root.
*/}}
{{- define "scs.nodeFiles" -}}
{{- $files := list -}}
{{- $patch := dict "serverTLSBootstrap" true "authentication" (dict "anonymous" (dict "enabled" false)) "authorization" (dict "mode" "Webhook") -}}
{{- $files = append $files (dict "path" (printf "%s/kubeletconfiguration0+merge.json" (include "scs.kubeletPatchPath" .)) "owner" "root:root" "permissions" "0644" "content" (toJson $patch)) -}}
{{- range $m := .Values.registryMirrors -}}
{{- $dir := printf "/etc/containerd/certs.d/%s" .registry -}}
{{- $files = append $files (dict "path" (printf "%s/hosts.toml" $dir) "owner" "root:root" "permissions" (ternary "0600" "0644" (ne .credentialsSecret "")) "content" (include "scs.hostsToml" .)) -}}
{{- with .caCertificate -}}
{{- $files = append $files (dict "path" (printf "%s/ca.crt" $dir) "owner" "root:root" "permissions" "0644" "content" .) -}}
{{- end -}}
{{- with .credentialsSecret -}}
{{- /* the credentials stay in the management cluster's Secret; the bootstrap controller
       copies them into the node's bootstrap data, root-only files */ -}}
{{- range $key := list "username" "password" -}}
{{- $files = append $files (dict "path" (printf "%s/%s/%s" (include "scs.registryCredentialsDir" $) $m.registry $key) "owner" "root:root" "permissions" "0600" "contentFrom" (dict "secret" (dict "name" $m.credentialsSecret "key" $key))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $index, $pem := .Values.trustedCAs -}}
{{- $files = append $files (dict "path" (printf "/usr/local/share/ca-certificates/scs-trusted-%d.crt" $index) "owner" "root:root" "permissions" "0644" "content" $pem) -}}
{{- end -}}
{{- with .Values.proxy -}}
{{- range $unit := list "containerd" "kubelet" -}}
{{- $files = append $files (dict "path" (printf "/etc/systemd/system/%s.service.d/http-proxy.conf" $unit) "owner" "root:root" "permissions" "0644" "content" (include "scs.proxyDropIn" $.Values.proxy)) -}}
{{- end -}}
{{- end -}}
{{- if eq (include "scs.nodeSetupNeeded" .) "true" -}}
{{- $files = append $files (dict "path" "/usr/local/sbin/scs-node-setup.sh" "owner" "root:root" "permissions" "0755" "content" (include "scs.nodeSetupScript" .)) -}}
{{- end -}}
{{- toYaml $files -}}
{{- end -}}

{{- define "scs.etcdBackupCredentialsDir" -}}/etc/kubernetes/etcd-backup-s3{{- end -}}
{{- define "scs.registryCredentialsDir" -}}/etc/containerd/scs-credentials{{- end -}}

{{/* "true" when nodes need scs-node-setup.sh before kubeadm. Context: root. */}}
{{- define "scs.nodeSetupNeeded" -}}
{{- $credentials := false -}}
{{- range .Values.registryMirrors -}}
{{- if .credentialsSecret -}}{{- $credentials = true -}}{{- end -}}
{{- end -}}
{{- or (not (empty .Values.proxy)) (not (empty .Values.trustedCAs)) $credentials -}}
{{- end -}}

{{/* systemd drop-in with the proxy environment of containerd or kubelet. Context: proxy. */}}
{{- define "scs.proxyDropIn" -}}
[Service]
{{- with .httpProxy }}
Environment="HTTP_PROXY={{ . }}"
{{- end }}
{{- with .httpsProxy }}
Environment="HTTPS_PROXY={{ . }}"
{{- end }}
Environment="NO_PROXY={{ join "," .noProxy }}"
{{ end -}}

{{/*
Runs before kubeadm on every node (preKubeadmCommands): trusted CAs into the OS trust store,
the API endpoint into NO_PROXY (its address is only known on the node, in the kubeadm
configuration that Cluster API wrote), the registry credentials into the Authorization
header of their hosts.toml, then containerd restarted so that kubeadm's image pulls use all
of it. Idempotent: a second run changes nothing. Context: root.
*/}}
{{- define "scs.nodeSetupScript" -}}
#!/bin/bash
# Node preparation before kubeadm, written by scs-templates (docs/cluster-features.md).
set -euo pipefail
log() { echo "scs-node-setup: $*"; }
{{- if .Values.trustedCAs }}

if command -v update-ca-certificates > /dev/null; then
  update-ca-certificates
elif command -v update-ca-trust > /dev/null; then
  cp /usr/local/share/ca-certificates/scs-trusted-*.crt /etc/pki/ca-trust/source/anchors/
  update-ca-trust extract
else
  log "no update-ca-certificates or update-ca-trust on this image" >&2
  exit 1
fi
log "trusted CAs installed"
{{- end }}
{{- if .Values.proxy }}

endpoint=$(grep -hoE '(controlPlaneEndpoint|apiServerEndpoint): *"?[^" ]+' \
  /run/kubeadm/kubeadm.yaml /run/kubeadm/kubeadm-join-config.yaml 2> /dev/null \
  | head -n1 | sed -E 's/^[^:]+: *"?//; s/:[0-9]+$//' || true)
if [ -n "$endpoint" ]; then
  for unit in containerd kubelet; do
    dropin=/etc/systemd/system/$unit.service.d/http-proxy.conf
    if ! grep -qF ",$endpoint\"" "$dropin"; then
      sed -i -E 's|^(Environment="NO_PROXY=[^"]*)"$|\1,'"$endpoint"'"|' "$dropin"
    fi
  done
  log "API endpoint $endpoint added to NO_PROXY"
fi
{{- end }}
{{- range .Values.registryMirrors }}
{{- if .credentialsSecret }}

credentials={{ include "scs.registryCredentialsDir" $ }}/{{ .registry }}
auth=$(printf '%s:%s' "$(cat "$credentials/username")" "$(cat "$credentials/password")" | base64 -w0)
sed -i "s|@SCS_REGISTRY_AUTH@|Basic $auth|" /etc/containerd/certs.d/{{ .registry }}/hosts.toml
log "credentials of {{ .registry }} set"
{{- end }}
{{- end }}

systemctl daemon-reload
systemctl restart containerd
{{ end -}}

{{/* containerd hosts.toml of one registry mirror. Context: one registryMirrors entry. */}}
{{- define "scs.hostsToml" -}}
{{- if .server }}server = {{ .server | toJson }}
{{- else }}# no server: each registry falls back to itself (containerd's _default)
{{- end }}
{{- range .hosts }}

[host.{{ .url | toJson }}]
  capabilities = ["pull", "resolve"]
  skip_verify = {{ .skipVerify }}
  override_path = {{ .overridePath }}
  {{- if $.caCertificate }}
  ca = {{ printf "/etc/containerd/certs.d/%s/ca.crt" $.registry | toJson }}
  {{- end }}
  {{- if $.credentialsSecret }}
  [host.{{ .url | toJson }}.header]
    Authorization = "@SCS_REGISTRY_AUTH@"
  {{- end }}
{{- end }}
{{ end -}}

{{/*
Files on control-plane nodes only: the admission configuration, the audit policy, the
structured authentication configuration (OIDC issuers), the encryption configuration (from
its Secret), and the etcd maintenance script with
its systemd service and timer. Context: root.
*/}}
{{- define "scs.controlPlaneFiles" -}}
{{- $v := .Values -}}
{{- $files := list -}}
{{- $files = append $files (dict "path" (printf "%s/admission-config.yaml" (include "scs.admissionDir" .)) "owner" "root:root" "permissions" "0644" "content" (include "scs.admissionConfig" .)) -}}
{{- if $v.apiServer.audit.enabled -}}
{{- $files = append $files (dict "path" (printf "%s/policy.yaml" (include "scs.auditPolicyDir" .)) "owner" "root:root" "permissions" "0644" "content" (printf "%s\n" (toYaml $v.apiServer.audit.policy))) -}}
{{- end -}}
{{- with $v.apiServer.encryption -}}
{{- if .enabled -}}
{{- /* the key stays in the management cluster's Secret: the bootstrap controller copies
       it into the node's cloud-init data, readable by root only */ -}}
{{- $files = append $files (dict "path" (include "scs.encryptionConfigPath" $) "owner" "root:root" "permissions" "0600" "contentFrom" (dict "secret" (dict "name" .secretName "key" .secretKey))) -}}
{{- end -}}
{{- end -}}
{{- with $v.apiServer.authentication -}}
{{- $files = append $files (dict "path" (printf "%s/config.yaml" (include "scs.authenticationDir" $)) "owner" "root:root" "permissions" "0644" "content" (printf "%s\n" (toYaml .))) -}}
{{- end -}}
{{- $files = append $files (dict "path" "/usr/local/sbin/etcd-priority.sh" "owner" "root:root" "permissions" "0755" "content" (include "scs.etcdPriorityScript" .)) -}}
{{- $files = append $files (dict "path" "/etc/systemd/system/etcd-priority.service" "owner" "root:root" "permissions" "0644" "content" (include "scs.etcdPriorityService" .)) -}}
{{- $files = append $files (dict "path" "/etc/systemd/system/etcd-priority.timer" "owner" "root:root" "permissions" "0644" "content" (include "scs.etcdPriorityTimer" .)) -}}
{{- if gt (int64 $v.etcd.dataDiskGiB) 0 -}}
{{- $files = append $files (dict "path" "/usr/local/sbin/scs-etcd-disk.sh" "owner" "root:root" "permissions" "0755" "content" (include "scs.etcdDiskScript" .)) -}}
{{- end -}}
{{- if $v.etcd.unsafeFS -}}
{{- $files = append $files (dict "path" "/etc/systemd/system/etcd-unsafe-fs.service" "owner" "root:root" "permissions" "0644" "content" (include "scs.etcdUnsafeFsService" .)) -}}
{{- end -}}
{{- if $v.etcd.defrag.enabled -}}
{{- $files = append $files (dict "path" "/usr/local/sbin/etcd-defrag.sh" "owner" "root:root" "permissions" "0755" "content" (include "scs.etcdDefragScript" .)) -}}
{{- $files = append $files (dict "path" "/etc/systemd/system/etcd-defrag.service" "owner" "root:root" "permissions" "0644" "content" (include "scs.etcdDefragService" .)) -}}
{{- $files = append $files (dict "path" "/etc/systemd/system/etcd-defrag.timer" "owner" "root:root" "permissions" "0644" "content" (include "scs.etcdDefragTimer" .)) -}}
{{- with $v.etcd.defrag.upload -}}
{{- /* the S3 credentials stay in the management cluster's Secret: the bootstrap controller
       copies them into the node's bootstrap data, root-only files */ -}}
{{- range $key := list "AWS_ACCESS_KEY_ID" "AWS_SECRET_ACCESS_KEY" -}}
{{- $files = append $files (dict "path" (printf "%s/%s" (include "scs.etcdBackupCredentialsDir" $) $key) "owner" "root:root" "permissions" "0600" "contentFrom" (dict "secret" (dict "name" $v.etcd.defrag.upload.credentialsSecret "key" $key))) -}}
{{- end -}}
{{- with $v.proxy -}}
{{- /* the upload goes through the nodes' proxy, as containerd's pulls do */ -}}
{{- $files = append $files (dict "path" "/etc/systemd/system/etcd-defrag.service.d/http-proxy.conf" "owner" "root:root" "permissions" "0644" "content" (include "scs.proxyDropIn" .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $files -}}
{{- end -}}

{{/*
AdmissionConfiguration read by kube-apiserver (--admission-control-config-file): Pod
Security defaults and exemptions, and a server-wide EventRateLimit (scs-0215, scs-0217).
*/}}
{{- define "scs.admissionConfig" -}}
{{- $a := .Values.admission -}}
{{- $pss := dict "apiVersion" "pod-security.admission.config.k8s.io/v1" "kind" "PodSecurityConfiguration" "defaults" (dict "enforce" $a.podSecurity.enforce "enforce-version" "latest" "warn" $a.podSecurity.warn "warn-version" "latest" "audit" $a.podSecurity.audit "audit-version" "latest") "exemptions" (dict "usernames" (list) "runtimeClasses" (list) "namespaces" $a.podSecurity.exemptNamespaces) -}}
{{- $erl := dict "apiVersion" "eventratelimit.admission.k8s.io/v1alpha1" "kind" "Configuration" "limits" (list (dict "type" "Server" "qps" (int64 $a.eventRateLimit.qps) "burst" (int64 $a.eventRateLimit.burst))) -}}
{{- $config := dict "apiVersion" "apiserver.config.k8s.io/v1" "kind" "AdmissionConfiguration" "plugins" (list (dict "name" "PodSecurity" "configuration" $pss) (dict "name" "EventRateLimit" "configuration" $erl)) -}}
{{- toYaml $config }}
{{ end -}}

{{/*
etcd's CPU and disk priority (KaaS v1 ETCD_PRIO_BOOST, always on now): on shared cloud hosts
a starved etcd misses heartbeats and the control plane flaps. The etcd static pod can
restart at any time, so a timer re-applies the priority every few minutes; it is cheap and
idempotent. ionice takes effect with the BFQ/CFQ I/O schedulers, renice always.
*/}}
{{- define "scs.etcdPriorityScript" -}}
#!/bin/bash
# etcd CPU and I/O priority, written by scs-templates (docs/maintenance.md).
set -u
for pid in $(pgrep -x etcd); do
  ionice -c 2 -n 0 -p "$pid" || true
  renice -n -10 -p "$pid" > /dev/null || true
done
{{ end -}}

{{- define "scs.etcdPriorityService" -}}
[Unit]
Description=Raise etcd's CPU and I/O priority (scs-templates)
Documentation=https://github.com/SovereignCloudStack/scs-templates/blob/main/docs/maintenance.md

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/etcd-priority.sh
{{ end -}}

{{- define "scs.etcdPriorityTimer" -}}
[Unit]
Description=Keep etcd's CPU and I/O priority raised (scs-templates)

[Timer]
OnBootSec=1min
OnUnitActiveSec=5min

[Install]
WantedBy=timers.target
{{ end -}}

{{/*
The etcd volume (etcd.volume) on a control-plane node. Its device name depends on the image's
disk bus (virtio-blk /dev/vdb, virtio-scsi /dev/sdb, shifted by ephemeral or swap disks), and
the Cinder volume's ID (its serial under /dev/disk/by-id) is not known when the bootstrap data
is made, so the disk is found by what is known: a whole disk of exactly etcd.volume.sizeGiB
without partitions or file system. Two such disks: refused, never guessed. Formatted once
(label etcd_data), in /etc/fstab by that label, mounted before kubeadm; kubeadm wants an empty
etcd data directory, so ext4's empty lost+found goes (e2fsck makes it again when needed).
*/}}
{{- define "scs.etcdDiskScript" -}}
#!/bin/bash
# The etcd volume, found by its size, formatted once and mounted at /var/lib/etcd; written by
# scs-templates (docs/cluster-features.md, "etcd on its own volume").
set -euo pipefail
size=$(( {{ int64 .Values.etcd.dataDiskGiB }} * 1073741824 ))
label=etcd_data
target=/var/lib/etcd

empty_disks() {
  local name type bytes
  lsblk -dbnpo NAME,TYPE,SIZE | while read -r name type bytes; do
    if [ "$type" != disk ] || [ "$bytes" != "$size" ]; then continue; fi
    [ "$(lsblk -npo NAME "$name" | wc -l)" -eq 1 ] || continue
    [ -z "$(blkid -p -o value -s TYPE "$name" || true)" ] || continue
    echo "$name"
  done
}

mountpoint -q "$target" && exit 0
device=$(blkid -L "$label" || true)
tries=0
while [ -z "$device" ]; do
  mapfile -t found < <(empty_disks)
  # the count as "$#", never a dollar-brace-hash: cloud-init renders the bootstrap data
  # as Jinja, where brace-hash opens a comment
  set -- "${found[@]}"
  if [ "$#" -gt 1 ]; then
    echo "scs-etcd-disk: several empty disks of $size bytes (${found[*]}): refusing to guess" >&2
    exit 1
  fi
  if [ "$#" -eq 1 ]; then
    device=$1
    mkfs.ext4 -q -L "$label" "$device"
    break
  fi
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "scs-etcd-disk: no empty disk of $size bytes appeared" >&2
    exit 1
  fi
  sleep 2
done
mkdir -p "$target"
grep -q "^LABEL=$label " /etc/fstab || echo "LABEL=$label $target ext4 defaults 0 2" >> /etc/fstab
mount "$device" "$target"
rmdir "$target/lost+found" 2>/dev/null || true
{{ end -}}

{{- define "scs.etcdUnsafeFsService" -}}
[Unit]
Description=Remount / with barrier=0,commit=20 for etcd (scs-templates, etcd.unsafeFS)
Documentation=https://github.com/SovereignCloudStack/scs-templates/blob/main/docs/maintenance.md
After=local-fs.target
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/mount -o remount,barrier=0,commit=20 /

[Install]
WantedBy=multi-user.target
{{ end -}}

{{- define "scs.etcdDefragService" -}}
[Unit]
Description=etcd defragmentation and snapshot (scs-templates)
Documentation=https://github.com/SovereignCloudStack/scs-templates/blob/main/docs/maintenance.md
After=kubelet.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/etcd-defrag.sh
Nice=10
IOSchedulingClass=best-effort
IOSchedulingPriority=7
{{ end -}}

{{- define "scs.etcdDefragTimer" -}}
[Unit]
Description=Nightly etcd defragmentation and snapshot (scs-templates)

[Timer]
OnCalendar={{ .Values.etcd.defrag.schedule }}
Persistent=false

[Install]
WantedBy=timers.target
{{ end -}}

{{/*
Leader-aware etcd maintenance. Every control-plane node runs the timer; only the current
leader acts, so the cluster is defragmented once per night: followers first (one at a
time), then leadership moves to a defragmented follower and the old leader defragments
itself (a defragmenting member blocks its reads and writes, a leader must not do that). Then
a compressed snapshot (kept: backupRetention newest) and fstrim. etcdctl runs inside the
etcd static pod (crictl exec): the node needs no etcdctl and always uses a matching one.
*/}}
{{- define "scs.etcdDefragScript" -}}
#!/bin/bash
# etcd defragmentation and snapshot, written by scs-templates (docs/maintenance.md).
set -euo pipefail

BACKUP_DIR={{ .Values.etcd.defrag.backupDirectory }}
RETENTION={{ include "scs.int" .Values.etcd.defrag.backupRetention }}
LOCAL=https://127.0.0.1:2379
PKI=/etc/kubernetes/pki/etcd
# The etcd container sees /var/lib/etcd (its data dir) at the same path as the host.
SNAPSHOT_TMP=/var/lib/etcd/scs-snapshot.db
log() { echo "etcd-defrag: $*"; }
{{- with .Values.etcd.defrag.upload }}
{{ include "scs.etcdUploadFunctions" (dict "upload" . "root" $) }}
{{- end }}

CID=$(crictl ps --quiet --state running --name '^etcd$' | head -n1)
if [ -z "$CID" ]; then
  log "no running etcd container on this node; nothing to do"
  exit 0
fi
etcdctl() {
  crictl exec "$CID" etcdctl --cacert="$PKI/ca.crt" --cert="$PKI/healthcheck-client.crt" \
    --key="$PKI/healthcheck-client.key" --command-timeout=120s "$@"
}
# "simple" rows: endpoint, ID (hex), version, ..., is-leader, is-learner, ...; the first
# true/false column after the version is the leader flag (etcd 3.5 and 3.6). An awk program:
# its $i are awk's fields, not the shell's.
# shellcheck disable=SC2016
leader_flag='{for (i = 3; i <= NF; i++) if ($i == "true" || $i == "false") { print $i; exit }}'

SELF=$(etcdctl --endpoints="$LOCAL" endpoint status -w simple)
SELF_ID=$(echo "$SELF" | awk -F', ' 'NR == 1 {print $2}')
if [ "$(echo "$SELF" | awk -F', ' "$leader_flag")" != "true" ]; then
  log "member $SELF_ID is not the leader; the leader does the work"
  exit 0
fi

FOLLOWERS=$(etcdctl --endpoints="$LOCAL" endpoint status --cluster -w simple \
  | awk -F', ' -v self="$SELF_ID" '$2 != self {print $1 " " $2}')
NEXT_LEADER=""
while read -r endpoint id; do
  [ -n "$endpoint" ] || continue
  log "defragmenting follower $id ($endpoint)"
  etcdctl --endpoints="$endpoint" defrag
  NEXT_LEADER=${NEXT_LEADER:-$id}
done <<< "$FOLLOWERS"

if [ -n "$NEXT_LEADER" ]; then
  log "moving leadership from $SELF_ID to $NEXT_LEADER"
  etcdctl --endpoints="$LOCAL" move-leader "$NEXT_LEADER"
fi
log "defragmenting this member $SELF_ID"
etcdctl --endpoints="$LOCAL" defrag

if [ "$RETENTION" -gt 0 ]; then
  mkdir -p "$BACKUP_DIR"
  chmod 0700 "$BACKUP_DIR"
  rm -f "$SNAPSHOT_TMP" "$SNAPSHOT_TMP.part"
  etcdctl --endpoints="$LOCAL" snapshot save "$SNAPSHOT_TMP"
  TARGET="$BACKUP_DIR/etcd-snapshot-$(date -u +%Y%m%dT%H%M%SZ).db.gz"
  gzip -c "$SNAPSHOT_TMP" > "$TARGET.part"
  mv "$TARGET.part" "$TARGET"
  rm -f "$SNAPSHOT_TMP"
  log "saved $TARGET"
{{- with .Values.etcd.defrag.upload }}
  if upload "$TARGET"; then
    log "uploaded $TARGET to $S3_ENDPOINT/$S3_BUCKET/$S3_PREFIX/"
    {{- if .retention }}
    prune_bucket || S3_FAILED=1
    {{- end }}
  else
    S3_FAILED=1
  fi
{{- end }}
  # the names sort by their UTC time stamp: all but the RETENTION newest go
  # the count as "$#" (cloud-init renders the bootstrap data as Jinja: no brace-hash)
  set -- "$BACKUP_DIR"/etcd-snapshot-*.db.gz
  excess=$(($# - RETENTION))
  if [ "$excess" -gt 0 ]; then
    rm -f -- "${@:1:excess}"
  fi
fi

fstrim --verbose / || log "fstrim failed (ignored)"
{{- if .Values.etcd.defrag.upload }}
if [ -n "$S3_FAILED" ]; then
  log "the S3 upload failed (above); the snapshot is kept in $BACKUP_DIR" >&2
  exit 1
fi
{{- end }}
{{ end -}}

{{/*
The upload of a snapshot to an S3 bucket (etcd.backupS3): a path-style PUT signed with AWS
Signature Version 4 by the script itself (sha256sum, od, curl: on every node image). curl's
own --aws-sigv4 signs S3 uploads correctly only from curl 7.87 (x-amz-content-sha256 taken
as the payload hash), Ubuntu 22.04 has 7.81. The secret key is read from its root-only file
into the shell and goes into no command line (printf is a builtin; the HMAC keys travel on
pipes); curl gets its headers on standard input. The payload hash is the file's SHA-256: the
store refuses a corrupted upload. Context: dict upload (the values) and root.
*/}}
{{- define "scs.etcdUploadFunctions" -}}
S3_ENDPOINT={{ .upload.endpoint }}
S3_BUCKET={{ .upload.bucket }}
S3_REGION={{ .upload.region }}
S3_PREFIX={{ .upload.prefix }}
{{- if .upload.retention }}
S3_RETENTION={{ include "scs.int" .upload.retention }}
{{- end }}
S3_CREDENTIALS={{ include "scs.etcdBackupCredentialsDir" .root }}
S3_FAILED=""

# "\xHH" escapes (printf %b) of a hex string read from standard input.
hex_escapes() { sed 's/../\\x&/g'; }
# HMAC-SHA256 (RFC 2104) of the message $2 under the key $1 (hex), printed as hex.
hmac_sha256() {
  local key=$1 ipad="" opad="" escape byte i inner
  if [ -n "${key:128}" ]; then
    key=$(printf '%s' "$key" | hex_escapes)
    key=$(printf '%b' "$key" | sha256sum)
    key=${key%% *}
  fi
  key=$key$(printf '%0128d' 0)
  for ((i = 0; i < 128; i += 2)); do
    byte=$((16#${key:i:2}))
    printf -v escape '\\x%02x' $((byte ^ 0x36))
    ipad+=$escape
    printf -v escape '\\x%02x' $((byte ^ 0x5c))
    opad+=$escape
  done
  inner=$({ printf '%b' "$ipad"; printf '%s' "$2"; } | sha256sum)
  inner=$(printf '%s' "${inner%% *}" | hex_escapes)
  { printf '%b' "$opad"; printf '%b' "$inner"; } | sha256sum | cut -d' ' -f1
}
sha256_hex() { sha256sum | cut -d' ' -f1; }

# One S3 request signed with AWS Signature Version 4: s3_request METHOD PATH QUERY
# PAYLOAD_HASH [curl arguments]; QUERY is canonical (sorted, encoded). Prints the reply's
# body and, on its last line, the HTTP status (000: no reply).
s3_request() {
  local method=$1 path=$2 query=$3 hash=$4 host now day scope request key part signature id secret
  shift 4
  id=$(cat "$S3_CREDENTIALS/AWS_ACCESS_KEY_ID")
  secret=$(cat "$S3_CREDENTIALS/AWS_SECRET_ACCESS_KEY")
  host=${S3_ENDPOINT#https://}
  now=$(date -u +%Y%m%dT%H%M%SZ)
  day=${now:0:8}
  scope="$day/$S3_REGION/s3/aws4_request"
  request=$(printf '%s\n%s\n%s\nhost:%s\nx-amz-content-sha256:%s\nx-amz-date:%s\n\n%s\n%s' \
    "$method" "$path" "$query" "$host" "$hash" "$now" "host;x-amz-content-sha256;x-amz-date" \
    "$hash" | sha256_hex)
  key=$(printf 'AWS4%s' "$secret" | od -An -v -tx1 | tr -d ' \n')
  for part in "$day" "$S3_REGION" s3 aws4_request; do
    key=$(hmac_sha256 "$key" "$part")
  done
  signature=$(hmac_sha256 "$key" "$(printf 'AWS4-HMAC-SHA256\n%s\n%s\n%s' "$now" "$scope" "$request")")
  printf 'header = "%s"\n' "Host: $host" "x-amz-content-sha256: $hash" "x-amz-date: $now" \
    "Authorization: AWS4-HMAC-SHA256 Credential=$id/$scope, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=$signature" \
    | curl --config - --silent --show-error --max-time 1800 --retry 3 --output - \
      --write-out '\n%{http_code}' --request "$method" "$@" "$S3_ENDPOINT$path${query:+?$query}" \
    || true
}

# The HTTP status of a reply of s3_request, or "000"; and S3's error code of its body.
status_of() { printf '%s' "${1##*$'\n'}"; }
error_of() { printf '%s' "$1" | grep -o '<Code>[^<]*' | cut -c7- || true; }

# PUT the file $1 to <endpoint>/<bucket>/<prefix>/<its name>; false (and a log line) when it
# did not arrive.
upload() {
  local file=$1 path part reply
  for part in AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY; do
    if [ ! -s "$S3_CREDENTIALS/$part" ]; then
      log "upload failed: no $S3_CREDENTIALS/$part (the Secret's key)" >&2
      return 1
    fi
  done
  path="/$S3_BUCKET/$S3_PREFIX/$(basename "$file")"
  reply=$(s3_request PUT "$path" "" "$(sha256_hex < "$file")" --upload-file "$file")
  if [ "$(status_of "$reply")" != 200 ]; then
    log "upload of $file to $S3_ENDPOINT$path failed: HTTP $(status_of "$reply") $(error_of "$reply")" >&2
    return 1
  fi
}
{{- if .upload.retention }}

# Delete all but the S3_RETENTION newest snapshots under the prefix (the names sort by their
# UTC time stamp; other objects are left alone); false (and a log line) on a failure.
prune_bucket() {
  local reply object status empty
  local -a objects
  empty=$(printf '' | sha256_hex)
  reply=$(s3_request GET "/$S3_BUCKET" "list-type=2&prefix=${S3_PREFIX//\//%2F}%2Fetcd-snapshot-" \
    "$empty")
  if [ "$(status_of "$reply")" != 200 ]; then
    log "listing $S3_ENDPOINT/$S3_BUCKET failed: HTTP $(status_of "$reply") $(error_of "$reply")" >&2
    return 1
  fi
  mapfile -t objects < <(printf '%s' "$reply" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g' \
    | grep -E '/etcd-snapshot-[0-9]{8}T[0-9]{6}Z[.]db[.]gz$' | sort)
  # the count as "$#" (cloud-init renders the bootstrap data as Jinja: no brace-hash)
  set -- "${objects[@]}"
  if [ "$#" -le "$S3_RETENTION" ]; then
    return 0
  fi
  for object in "${@:1:$# - S3_RETENTION}"; do
    status=$(status_of "$(s3_request DELETE "/$S3_BUCKET/$object" "" "$empty")")
    if [ "$status" != 204 ] && [ "$status" != 200 ]; then
      log "deleting $object from the bucket failed: HTTP $status" >&2
      return 1
    fi
    log "deleted $object from the bucket"
  done
}
{{- end }}
{{- end -}}
