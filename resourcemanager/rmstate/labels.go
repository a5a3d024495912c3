package rmstate

import (
	"fmt"
	"regexp"
	"sort"
	"sync"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// Labels is the cluster's node labels (RMNodeLabelsManager): the labels that exist
// and which node ids carry them. A node id with port 0 labels every NodeManager on its
// host.
type Labels struct {
	mu      sync.Mutex
	cluster map[string]bool
	onNode  map[string][]string // "host:port" -> labels
}

func NewLabels(initial []string) *Labels {
	s := &Labels{cluster: map[string]bool{}, onNode: map[string][]string{}}
	for _, l := range initial {
		if l != "" {
			s.cluster[l] = true
		}
	}
	return s
}

// labelsOf returns a node's labels: its own, or its host's (port 0).
func (s *Labels) labelsOf(id *yarnpb.NodeIdProto) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.onNode[NodeKey(id)]; ok {
		return append([]string(nil), l...)
	}
	return append([]string(nil), s.onNode[id.GetHost()+":0"]...)
}

// PartitionOf is the engine partition of a node: its label, "" for none.
func (s *Labels) PartitionOf(id *yarnpb.NodeIdProto) string {
	if l := s.labelsOf(id); len(l) > 0 {
		return l[0]
	}
	return ""
}

func (s *Labels) ClusterLabels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.cluster))
	for l := range s.cluster {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

func checkLabelName(l string) error {
	if len(l) > 255 {
		return fmt.Errorf("label added is more than 255 characters: %s", l)
	}
	if !labelName.MatchString(l) {
		return fmt.Errorf("label name should only contains {0-9, a-z, A-Z, -, _} and should not started with {-,_}, now it is=%s", l)
	}
	return nil
}

func (s *Labels) Add(labels []string) error {
	for _, l := range labels {
		if err := checkLabelName(l); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		s.cluster[l] = true
	}
	return nil
}

// Remove drops labels that no queue uses; nodes carrying them lose them. It returns the
// node ids whose labels changed.
func (s *Labels) Remove(labels []string, usedBy func(string) string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		if !s.cluster[l] {
			return nil, fmt.Errorf("Node label=%s is not exists", l)
		}
		if q := usedBy(l); q != "" {
			return nil, fmt.Errorf("Cannot remove label=%s, because queue=%s is using this label. Please remove label on queue before remove the label", l, q)
		}
	}
	var changed []string
	for _, l := range labels {
		delete(s.cluster, l)
		for node, ls := range s.onNode {
			kept := ls[:0]
			for _, x := range ls {
				if x != l {
					kept = append(kept, x)
				}
			}
			if len(kept) != len(ls) {
				changed = append(changed, node)
			}
			if len(kept) == 0 {
				delete(s.onNode, node)
			} else {
				s.onNode[node] = kept
			}
		}
	}
	return changed, nil
}

// Replace sets the labels of node ids ("host:port", port 0 = the whole host); every label
// must exist and a node carries at most one (a node belongs to one partition).
func (s *Labels) Replace(m map[string][]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for node, ls := range m {
		if len(ls) > 1 {
			return fmt.Errorf("%d labels specified on node=%s, please note that we do not support specifying multiple labels on a single host for now", len(ls), node)
		}
		for _, l := range ls {
			if !s.cluster[l] {
				return fmt.Errorf("Label=%s for NodeId=%s, is not exist in cluster node labels collection", l, node)
			}
		}
	}
	for node, ls := range m {
		if len(ls) == 0 {
			delete(s.onNode, node)
		} else {
			s.onNode[node] = append([]string(nil), ls...)
		}
	}
	return nil
}

// Export is the labels as the state store keeps them: every cluster label and the labels
// on nodes.
func (s *Labels) Export() (cluster []string, onNode map[string][]string) {
	return s.ClusterLabels(), s.Snapshot()
}

// Restore adds stored labels back (after a restart); labels from the queue configuration
// stay.
func (s *Labels) Restore(cluster []string, onNode map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range cluster {
		if l != "" {
			s.cluster[l] = true
		}
	}
	for k, v := range onNode {
		s.onNode[k] = append([]string(nil), v...)
	}
}

// Snapshot copies the node-to-labels map.
func (s *Labels) Snapshot() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.onNode))
	for k, v := range s.onNode {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// labelName is CommonNodeLabelsManager's rule for label names.
var labelName = regexp.MustCompile(`^[0-9a-zA-Z][0-9a-zA-Z-_]*$`)
