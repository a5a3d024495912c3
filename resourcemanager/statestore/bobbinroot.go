package statestore

import (
	"encoding/json"
	"sort"
	"strings"
)

// BobbinRoot is where FileSystemRMStateStore and ZKRMStateStore in the Java layout keep
// what only Bobbin stores: the container-token and NMToken key rings ("keys-<name>"), the
// NodeManagers a restart waits for ("node-<host:port>") and the node labels ("labels"),
// each a bobbinRecord. A Java RM neither reads nor writes them, so after one has run on the
// store the keys and the NodeManager list there are not the cluster's any more (it issued
// keys of its own; nodes came and went).
//
// "run" says which RM they belong to: the epoch of the last Bobbin RM that started on the
// store, written when it takes its epoch. They are the cluster's when that is the epoch
// before the one the starting RM takes (no RM started in between); otherwise they are left
// out of the loaded state and removed when this RM takes its epoch (unless it wrote them
// again since: its key rings are stored before its epoch is taken).

// bobbinRun is BobbinRoot's record of the last Bobbin RM's epoch.
const bobbinRun = "run"

// bobbinRecord is a record of BobbinRoot: its value and the epoch of the RM that wrote it
// (for people reading the store: "run" decides whether it is current).
type bobbinRecord struct {
	Epoch int64           `json:"epoch"`
	Value json.RawMessage `json:"value"`
}

// readBobbinRoot fills st from BobbinRoot's records (by name, "run" among them) for an RM
// that takes epoch next, and returns the names of the records that are not current.
func readBobbinRoot(st *State, recs map[string][]byte, next int64) (stale map[string]bool, err error) {
	current := false
	if data, ok := recs[bobbinRun]; ok {
		var run int64
		if err := json.Unmarshal(data, &run); err != nil {
			return nil, &recordError{bobbinRun, err}
		}
		current = run == next-1
	}
	stale = map[string]bool{}
	names := make([]string, 0, len(recs))
	for name := range recs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == bobbinRun {
			continue
		}
		var r bobbinRecord
		if err := json.Unmarshal(recs[name], &r); err != nil {
			return nil, &recordError{name, err}
		}
		var v any
		switch {
		case name == "labels":
			st.Labels = &LabelsRecord{}
			v = st.Labels
		case !current && (strings.HasPrefix(name, "keys-") || strings.HasPrefix(name, "node-")):
			stale[name] = true
			continue
		case strings.HasPrefix(name, "keys-"):
			k := &KeysRecord{}
			st.Keys[strings.TrimPrefix(name, "keys-")] = k
			v = k
		case strings.HasPrefix(name, "node-"):
			n := &NodeRecord{}
			st.Nodes = append(st.Nodes, n)
			v = n
		default:
			continue
		}
		if err := json.Unmarshal(r.Value, v); err != nil {
			return nil, &recordError{name, err}
		}
	}
	return stale, nil
}

// recordError names a BobbinRoot record that does not decode.
type recordError struct {
	name string
	err  error
}

func (e *recordError) Error() string { return e.name + ": " + e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }
