package rmcore

import (
	"fmt"
	"os/user"

	"github.com/bobbin-yarn/bobbin/resourcemanager/labelstore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// openLabelStore opens the Java RM's node-label store while node labels are enabled (as
// RMNodeLabelsManager opens its FileSystemNodeLabelsStore), so that labels outlive a
// restart with or without RM recovery, and those a Java RM kept in the same directory are
// there. When the state store already brought labels back (recover; an HA pair shares
// them there), those win and are written to the label store; otherwise the label store's
// are taken. Either way it is rewritten as one mirror, as the Java RM does at start. A
// store that cannot be opened or read stops the RM, as it stops the Java one.
func (rm *Core) openLabelStore(st *statestore.State) error {
	if !rm.settings.NodeLabels {
		return nil
	}
	name := "yarn"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	s, err := labelstore.Open(rm.opts.Conf, name)
	if err != nil {
		return fmt.Errorf("node-label store: %w", err)
	}
	if st == nil || st.Labels == nil {
		kept, err := s.Load()
		if err != nil {
			s.Close()
			return err
		}
		var cluster, nonExclusive []string
		for _, l := range kept.Labels {
			cluster = append(cluster, l.Name)
			if !l.Exclusive {
				nonExclusive = append(nonExclusive, l.Name)
			}
		}
		rm.labels.Restore(cluster, nonExclusive, kept.OnNode)
		rm.engine.SetNonExclusive(rm.labels.NonExclusive())
	}
	rm.labelStore = s
	if err := s.Save(rm.labelState()); err != nil {
		rm.closeLabelStore()
		return err
	}
	rm.log.WithFields(map[string]any{"store": s.Location(), "labels": len(rm.labels.ClusterLabels())}).Info("node-label store opened")
	return nil
}

// labelState is the cluster's labels as the label store keeps them.
func (rm *Core) labelState() labelstore.State {
	st := labelstore.State{OnNode: rm.labels.Snapshot()}
	for _, l := range rm.labels.ClusterLabels() {
		st.Labels = append(st.Labels, labelstore.Label(l))
	}
	return st
}

func (rm *Core) closeLabelStore() {
	if rm.labelStore != nil {
		rm.labelStore.Close()
		rm.labelStore = nil
	}
}
