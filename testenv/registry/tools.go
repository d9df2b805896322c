//go:build tools

// Package tools pins the upstream program this wrapper module builds.
package tools

import _ "github.com/google/go-containerregistry/cmd/registry"
