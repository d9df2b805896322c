//go:build tools

// Package tools pins the upstream program this wrapper module builds.
package tools

import _ "k8s.io/cloud-provider-openstack/cmd/openstack-cloud-controller-manager"
