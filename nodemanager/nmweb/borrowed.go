package nmweb

import (
	"net/http"

	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// serveBorrowed serves /ws/v1/node/borrowed: the settings' essentials and the history of
// measurements, oldest first.
func (s *server) serveBorrowed(w http.ResponseWriter, r *http.Request) {
	b, ok := s.Node.Borrowed()
	if !ok {
		webapp.WriteError(w, r, webapp.NotFound("borrowed mode and automatic labels are off (bobbin.nodemanager.borrowed.enabled, bobbin.nodemanager.auto-labels.enabled)"))
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"borrowed": map[string]any{
		"enabled": b.Settings.Borrowed, "autoLabels": b.Settings.AutoLabels,
		"intervalMs": b.Interval.Milliseconds(), "configuredVCores": b.Settings.VCores,
		"configuredMemoryMB": b.Settings.MemoryMB, "history": b.History}})
}

// serveResource is a resource plugin's devices (Java's NMResourceInfo): for yarn.io/gpu
// nvidia-smi's information, every GPU and those assigned, with their containers.
func (s *server) serveResource(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	info, ok := s.Node.Resource(name)
	if !ok {
		webapp.WriteError(w, r, webapp.NotFound("no resource plugin serves %q (yarn.nodemanager.resource-plugins)", name))
		return
	}
	webapp.Write(w, r, http.StatusOK, info)
}
