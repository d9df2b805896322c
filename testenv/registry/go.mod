module scs-templates.testenv/registry

go 1.25.0

require github.com/google/go-containerregistry v0.20.6
