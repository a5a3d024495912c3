package rmstate

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// HostLists are the include and exclude files (yarn.resourcemanager.nodes.include-path,
// .exclude-path): a host may register when the include list is empty or names it, and the
// exclude list does not.
type HostLists struct {
	Include, Exclude map[string]bool
}

// readHostFile reads a Hadoop hosts file: names separated by white space, "#" starts a
// comment. An empty path is an empty list.
func readHostFile(key, path string) (map[string]bool, error) {
	out := map[string]bool{}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, h := range strings.Fields(line) {
			out[h] = true
		}
	}
	return out, nil
}

func LoadHostLists(include, exclude string) (*HostLists, error) {
	in, err := readHostFile("yarn.resourcemanager.nodes.include-path", include)
	if err != nil {
		return nil, err
	}
	ex, err := readHostFile("yarn.resourcemanager.nodes.exclude-path", exclude)
	if err != nil {
		return nil, err
	}
	return &HostLists{Include: in, Exclude: ex}, nil
}

// Allows reports whether a node (host, or "host:port") may be part of the cluster. As in
// the Java RM (NodesListManager.isValidNode) a list may name the host or its address: a
// node registered as localhost is excluded by a file that says 127.0.0.1.
func (h *HostLists) Allows(host, key string) bool {
	if len(h.Include) == 0 && len(h.Exclude) == 0 {
		return true
	}
	ip := addressOf(host)
	if h.Exclude[host] || h.Exclude[key] || h.Exclude[ip] {
		return false
	}
	return len(h.Include) == 0 || h.Include[host] || h.Include[key] || h.Include[ip]
}

// addressOf is NetUtils.normalizeHostName: the host's IPv4 address (else its first), or
// the name itself when it does not resolve.
func addressOf(host string) string {
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return host
	}
	for _, ip := range ips {
		if ip.To4() != nil {
			return ip.String()
		}
	}
	return ips[0].String()
}
