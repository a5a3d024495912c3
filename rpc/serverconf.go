package rpc

import (
	"errors"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
)

// Keys of a daemon's IPC servers' limits.
const (
	KeyMaxIdle      = "ipc.client.connection.maxidletime"
	KeyIdleThresh   = "ipc.client.idlethreshold"
	KeyKillMax      = "ipc.client.kill.max"
	KeyIdleScan     = "ipc.client.connection.idle-scan-interval.ms"
	KeyReadBudgetMB = "bobbin.ipc.server.read-budget-mb"
)

// ReadServerLimits reads when a daemon's IPC servers close idle connections (Java's keys)
// and the request bytes they may hold at once (one budget, for all the daemon's servers
// to share). A value that is not a positive number is an error naming its key.
func ReadServerLimits(c *conf.Configuration) (IdleSettings, *ReadBudget, error) {
	var errs []error
	positive := func(key string, v int64, err error) int64 {
		if err == nil && v <= 0 {
			raw, _ := c.Raw(key)
			err = &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: "must be positive"}
		}
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	var st IdleSettings
	d, err := c.Duration(KeyMaxIdle, time.Millisecond)
	st.MaxIdle = time.Duration(positive(KeyMaxIdle, int64(d), err))
	d, err = c.Duration(KeyIdleScan, time.Millisecond)
	st.ScanInterval = time.Duration(positive(KeyIdleScan, int64(d), err))
	n, err := c.Int(KeyIdleThresh)
	st.Threshold = int(positive(KeyIdleThresh, int64(n), err))
	n, err = c.Int(KeyKillMax)
	st.KillMax = int(positive(KeyKillMax, int64(n), err))
	n, err = c.Int(KeyReadBudgetMB)
	mb := positive(KeyReadBudgetMB, int64(n), err)
	if err := errors.Join(errs...); err != nil {
		return st, nil, err
	}
	return st, NewReadBudget(mb << 20), nil
}
