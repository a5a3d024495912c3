package statestore

import (
	"time"

	metrics "github.com/rcrowley/go-metrics"
)

// Metered wraps a store with go-metrics: every write's latency (rm.statestore.write, a
// timer in nanoseconds), failed writes (rm.statestore.write_errors) and the time Load
// took (rm.statestore.load_ms). The RM's state is only as durable as these writes, so an
// operator watches them.
// onErr, when set, sees every failed write (the RM stops when it is fenced).
func Metered(s Store, reg metrics.Registry, onErr func(error)) Store {
	return &metered{Store: s, onErr: onErr, writes: metrics.GetOrRegisterTimer("rm.statestore.write", reg),
		errors: metrics.GetOrRegisterCounter("rm.statestore.write_errors", reg), load: metrics.GetOrRegisterGauge("rm.statestore.load_ms", reg)}
}

type metered struct {
	Store
	onErr  func(error)
	writes metrics.Timer
	errors metrics.Counter
	load   metrics.Gauge
}

func (m *metered) timed(f func() error) error {
	start := time.Now()
	err := f()
	m.writes.UpdateSince(start)
	if err != nil {
		m.errors.Inc(1)
		if m.onErr != nil {
			m.onErr(err)
		}
	}
	return err
}

func (m *metered) Load() (*State, error) {
	start := time.Now()
	st, err := m.Store.Load()
	m.load.Update(time.Since(start).Milliseconds())
	return st, err
}

func (m *metered) PutApp(rec *AppRecord) error {
	return m.timed(func() error { return m.Store.PutApp(rec) })
}

func (m *metered) PutApps(recs []*AppRecord) error {
	return m.timed(func() error { return m.Store.PutApps(recs) })
}

func (m *metered) RemoveApps(ids []string) error {
	return m.timed(func() error { return m.Store.RemoveApps(ids) })
}

func (m *metered) PutKeys(name string, keys *KeysRecord) error {
	return m.timed(func() error { return m.Store.PutKeys(name, keys) })
}

func (m *metered) PutNode(rec *NodeRecord) error {
	return m.timed(func() error { return m.Store.PutNode(rec) })
}

func (m *metered) PutLabels(rec *LabelsRecord) error {
	return m.timed(func() error { return m.Store.PutLabels(rec) })
}

func (m *metered) PutDelegation(name string, rec *DelegationRecord) error {
	return m.timed(func() error { return m.Store.PutDelegation(name, rec) })
}

func (m *metered) RemoveDelegation(name string) error {
	return m.timed(func() error { return m.Store.RemoveDelegation(name) })
}

func (m *metered) RemoveNode(id string) error {
	return m.timed(func() error { return m.Store.RemoveNode(id) })
}

func (m *metered) NextEpoch() (int64, error) {
	var epoch int64
	err := m.timed(func() (err error) {
		epoch, err = m.Store.NextEpoch()
		return err
	})
	return epoch, err
}
