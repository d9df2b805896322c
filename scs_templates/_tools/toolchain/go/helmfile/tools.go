//go:build tools

// Package tools pins the helmfile command for `go build github.com/helmfile/helmfile`.
package tools

import _ "github.com/helmfile/helmfile"
