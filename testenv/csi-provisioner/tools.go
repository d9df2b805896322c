//go:build tools

// Package tools pins the upstream program this wrapper module builds: the csi-provisioner
// sidecar (external-provisioner) that the Cinder CSI chart runs beside the controller plugin.
package tools

import (
	_ "github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner"
)
