package nodemanager

import (
	"net"
	"os"
	"slices"
	"strings"
)

// NodeHost is the host of the NodeManager's NodeId, named as the Java NodeManager names it
// (ContainerManagerImpl.buildNodeId): the canonical name of the address in
// yarn.nodemanager.address (whose default host is ${yarn.nodemanager.hostname}, 0.0.0.0)
// — for a wildcard, the local host's — that is, the name a reverse lookup of its IP gives,
// or the IP itself when the lookup finds none (InetAddress.getCanonicalHostName). So a
// NodeManager serving on 127.0.0.1:8041 is the node localhost:8041, as a Java one on the
// same host is, and administrators' files and commands name it the same way for both.
// yarn.nodemanager.bind-host only moves where the servers listen.
func NodeHost(addrHost string) string {
	if addrHost == "" || addrHost == "0.0.0.0" || addrHost == "::" {
		h, err := os.Hostname()
		if err != nil {
			return "localhost"
		}
		addrHost = h
	}
	ip := net.ParseIP(addrHost)
	if ip == nil {
		ips, err := net.LookupIP(addrHost)
		if err != nil || len(ips) == 0 {
			return addrHost // unresolvable: Java fails to bind; keep the name
		}
		// Hadoop's daemons run with java.net.preferIPv4Stack=true.
		ip = ips[0]
		if i := slices.IndexFunc(ips, func(x net.IP) bool { return x.To4() != nil }); i >= 0 {
			ip = ips[i]
		}
	}
	names, err := net.LookupAddr(ip.String())
	if err != nil || len(names) == 0 {
		return ip.String()
	}
	name := strings.TrimSuffix(names[0], ".")
	// Java keeps a reverse name only if it resolves back to the address.
	if back, err := net.LookupIP(name); err != nil || !slices.ContainsFunc(back, ip.Equal) {
		return ip.String()
	}
	return name
}
