//go:build tools

// Package tools pins the upstream programs this wrapper module builds: OCCM and the Cinder
// CSI plugin, two commands of one module at one release, so they share one dependency set
// and every compiled package of it.
package tools

import (
	_ "k8s.io/cloud-provider-openstack/cmd/cinder-csi-plugin"
	_ "k8s.io/cloud-provider-openstack/cmd/openstack-cloud-controller-manager"
)
