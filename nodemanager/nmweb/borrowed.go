package nmweb

import (
	"encoding/json"
	"net/http"
)

// serveBorrowed serves /ws/v1/node/borrowed: the settings' essentials and the history of
// measurements, oldest first.
func (s *server) serveBorrowed(w http.ResponseWriter, _ *http.Request) {
	b, ok := s.Node.Borrowed()
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{"RemoteException": map[string]string{"exception": "NotFoundException",
			"message": "borrowed mode and automatic labels are off (bobbin.nodemanager.borrowed.enabled, bobbin.nodemanager.auto-labels.enabled)"}})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"borrowed": map[string]any{
		"enabled": b.Settings.Borrowed, "autoLabels": b.Settings.AutoLabels,
		"intervalMs": b.Interval.Milliseconds(), "configuredVCores": b.Settings.VCores,
		"configuredMemoryMB": b.Settings.MemoryMB, "history": b.History}})
}
