package rmstate

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// Labels is the cluster's node labels (RMNodeLabelsManager): the labels that exist
// and which node ids carry them. A node id with port 0 labels every NodeManager on its
// host.
type Labels struct {
	mu      sync.Mutex
	cluster map[string]bool     // label -> exclusive
	onNode  map[string][]string // "host:port" -> labels
}

// Label is a cluster node label. An exclusive label's nodes serve only requests for it; a
// non-exclusive one's idle resources also serve requests for the default partition.
type Label struct {
	Name      string
	Exclusive bool
}

// NewLabels starts with no labels: as in the Java RM, the labels a queue configuration
// names exist only once an administrator adds them (or the store brings them back).
func NewLabels() *Labels {
	return &Labels{cluster: map[string]bool{}, onNode: map[string][]string{}}
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

// ClusterLabels is every cluster label, by name.
func (s *Labels) ClusterLabels() []Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Label, 0, len(s.cluster))
	for l, exclusive := range s.cluster {
		out = append(out, Label{Name: l, Exclusive: exclusive})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Exists reports whether the cluster has label l.
func (s *Labels) Exists(l string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.cluster[l]
	return ok
}

// NonExclusive is the names of the non-exclusive labels.
func (s *Labels) NonExclusive() []string {
	var out []string
	for _, l := range s.ClusterLabels() {
		if !l.Exclusive {
			out = append(out, l.Name)
		}
	}
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

// Add adds labels to the cluster (CommonNodeLabelsManager.addToCluserNodeLabels): adding
// one that exists is a no-op, unless it would change its exclusivity, which is refused. It
// returns the labels that are new.
func (s *Labels) Add(labels []Label) ([]Label, error) {
	for _, l := range labels {
		if err := checkLabelName(l.Name); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		if exclusive, ok := s.cluster[l.Name]; ok && exclusive != l.Exclusive {
			return nil, fmt.Errorf("Exclusivity cannot be modified for an existing label with : <%s:exclusivity=%t>", l.Name, l.Exclusive)
		}
	}
	var added []Label
	for _, l := range labels {
		if _, ok := s.cluster[l.Name]; !ok {
			s.cluster[l.Name] = l.Exclusive
			added = append(added, l)
		}
	}
	return added, nil
}

// Remove drops labels that no queue uses; nodes carrying them lose them. It returns the
// node ids whose labels changed.
func (s *Labels) Remove(labels []string, usedBy func(string) string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		if _, ok := s.cluster[l]; !ok {
			return nil, fmt.Errorf("Node label=%s to be removed doesn't existed in cluster node labels collection.", l)
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
	// The Java RM's checks and words (CommonNodeLabelsManager.checkReplaceLabelsOnNode).
	for node, ls := range m {
		if len(ls) > 1 {
			host, _, _ := strings.Cut(node, ":")
			return fmt.Errorf("%d labels specified on host=%s, please note that we do not support specifying multiple labels on a single host for now.", len(ls), host)
		}
		for _, l := range ls {
			if _, ok := s.cluster[l]; !ok {
				return fmt.Errorf("Not all labels being replaced contained by known label collections, please check, new labels=[%s]", strings.Join(ls, ","))
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

// Export is the labels as the state store keeps them: every cluster label, the
// non-exclusive ones among them, and the labels on nodes.
func (s *Labels) Export() (cluster, nonExclusive []string, onNode map[string][]string) {
	for _, l := range s.ClusterLabels() {
		cluster = append(cluster, l.Name)
		if !l.Exclusive {
			nonExclusive = append(nonExclusive, l.Name)
		}
	}
	return cluster, nonExclusive, s.Snapshot()
}

// Restore adds stored labels back (after a restart); labels from the queue configuration
// stay.
func (s *Labels) Restore(cluster, nonExclusive []string, onNode map[string][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range cluster {
		if l != "" {
			s.cluster[l] = !slices.Contains(nonExclusive, l)
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
