// Command containerd-check runs containerd's OWN registry code and Go's proxy selection on
// the node files scs-templates renders (tests/test_containerd_node_files.py).
//
// No node boots on this machine, so the files the bootstrap controller writes are checked
// by the code that reads them on a node: containerd v2's hosts.toml loader
// (core/remotes/docker/config.ConfigureHosts, what its CRI plugin uses for every image
// pull, kubeadm's included) and its resolver (core/remotes/docker.NewResolver), and the
// proxy selection of Go's net/http (http.ProxyFromEnvironment), which containerd's HTTP
// transport (docker.DefaultHTTPTransport) and the kubelet use.
//
//	containerd-check hosts -root DIR -cert F -key F REF...
//	    chroot into DIR (a node's file tree: DIR/etc/containerd/certs.d/...), start a TLS
//	    registry on loopback with the certificate F/key F (read before the chroot), send
//	    every connection containerd makes there, and resolve each image REF. Prints JSON:
//	    per REF the hosts containerd configured from certs.d, the resolve result, and the
//	    requests the registry saw (host, path, Authorization).
//	containerd-check proxy URL...
//	    Prints JSON: per URL the proxy http.ProxyFromEnvironment picks ("" = direct), from
//	    this process's HTTP_PROXY, HTTPS_PROXY and NO_PROXY.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
)

// manifest is what the registry serves for every manifest request: an empty OCI manifest.
const manifest = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
	`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":2,` +
	`"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},"layers":[]}`

type request struct {
	Host          string `json:"host"`
	Method        string `json:"method"`
	Path          string `json:"path"`
	Authorization string `json:"authorization"`
}

type host struct {
	Scheme       string              `json:"scheme"`
	Host         string              `json:"host"`
	Path         string              `json:"path"`
	Capabilities []string            `json:"capabilities"`
	Header       map[string][]string `json:"header"`
}

type resolved struct {
	Hosts    []host    `json:"hosts"`
	Error    string    `json:"error"`
	Digest   string    `json:"digest"`
	Requests []request `json:"requests"`
}

func capabilities(c docker.HostCapabilities) []string {
	names := []string{}
	for _, known := range []struct {
		bit  docker.HostCapabilities
		name string
	}{
		{docker.HostCapabilityPull, "pull"},
		{docker.HostCapabilityResolve, "resolve"},
		{docker.HostCapabilityPush, "push"},
		{docker.HostCapabilityReferrers, "referrers"},
	} {
		if c&known.bit != 0 {
			names = append(names, known.name)
		}
	}
	return names
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "containerd-check: "+format+"\n", args...)
	os.Exit(1)
}

func hosts(args []string) {
	flags := flag.NewFlagSet("hosts", flag.ExitOnError)
	root := flags.String("root", "", "the node's file tree")
	certFile := flags.String("cert", "", "the registry's TLS certificate (PEM)")
	keyFile := flags.String("key", "", "the registry's TLS key (PEM)")
	_ = flags.Parse(args)
	if *root == "" || *certFile == "" || *keyFile == "" || flags.NArg() == 0 {
		fail("usage: hosts -root DIR -cert F -key F REF...")
	}
	certificate, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fail("the registry's key pair: %v", err)
	}
	// from here on every absolute path (hosts.toml's ca = "/etc/containerd/...") is the
	// node's; the system trust store is the node's too (none: only the files given)
	if err := syscall.Chroot(*root); err != nil {
		fail("chroot %s: %v", *root, err)
	}
	if err := os.Chdir("/"); err != nil {
		fail("chdir: %v", err)
	}

	var mu sync.Mutex
	var seen []request
	listener, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{certificate}})
	if err != nil {
		fail("listen: %v", err)
	}
	server := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, request{r.Host, r.Method, r.URL.RequestURI(), r.Header.Get("Authorization")})
			mu.Unlock()
			if !strings.Contains(r.URL.Path, "/manifests/") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Content-Length", fmt.Sprint(len(manifest)))
			if r.Method == http.MethodGet {
				_, _ = w.Write([]byte(manifest))
			}
		}),
	}
	go func() { _ = server.Serve(listener) }()
	address := listener.Addr().String()

	ctx := context.Background()
	options := config.HostOptions{
		HostDir: config.HostDirFromRoot("/etc/containerd/certs.d"),
		UpdateClient: func(client *http.Client) error {
			// every registry host is this loopback registry; nothing leaves the machine
			if transport, ok := client.Transport.(*http.Transport); ok {
				transport.Proxy = nil
				transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
					return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, address)
				}
			}
			return nil
		},
	}
	registryHosts := config.ConfigureHosts(ctx, options)
	results := map[string]resolved{}
	for _, ref := range flags.Args() {
		mu.Lock()
		seen = nil
		mu.Unlock()
		var result resolved
		registry := strings.SplitN(ref, "/", 2)[0]
		configured, err := registryHosts(registry)
		if err != nil {
			result.Error = "hosts: " + err.Error()
		}
		for _, h := range configured {
			result.Hosts = append(result.Hosts, host{h.Scheme, h.Host, h.Path, capabilities(h.Capabilities), h.Header})
		}
		if err == nil {
			resolver := docker.NewResolver(docker.ResolverOptions{Hosts: registryHosts})
			timeout, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, descriptor, err := resolver.Resolve(timeout, ref)
			cancel()
			if err != nil {
				result.Error = err.Error()
			} else {
				result.Digest = descriptor.Digest.String()
			}
		}
		mu.Lock()
		result.Requests = append([]request{}, seen...)
		mu.Unlock()
		results[ref] = result
	}
	_ = server.Close()
	emit(results)
}

func proxy(urls []string) {
	results := map[string]string{}
	for _, u := range urls {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			fail("%s: %v", u, err)
		}
		chosen, err := http.ProxyFromEnvironment(req)
		if err != nil {
			fail("%s: %v", u, err)
		}
		results[u] = ""
		if chosen != nil {
			results[u] = chosen.String()
		}
	}
	emit(results)
}

func emit(value any) {
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(value); err != nil {
		fail("output: %v", err)
	}
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: containerd-check hosts|proxy ...")
	}
	switch os.Args[1] {
	case "hosts":
		hosts(os.Args[2:])
	case "proxy":
		proxy(os.Args[2:])
	default:
		fail("unknown command %q", os.Args[1])
	}
}
