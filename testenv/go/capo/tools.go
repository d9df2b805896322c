//go:build tools

// Package tools pins the upstream programs this wrapper module builds.
package tools

import _ "sigs.k8s.io/cluster-api-provider-openstack"
