//go:build tools

// Package tools pins the upstream programs this wrapper module builds: etcdctl and etcdutl of
// the plane's etcd release (testenv/go/etcd).
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
)
