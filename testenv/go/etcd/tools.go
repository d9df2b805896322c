//go:build tools

// Package tools pins the upstream programs this wrapper module builds.
package tools

import _ "go.etcd.io/etcd/server/v3"
