package nodemanager

import (
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
)

// monitorInterval is how often container memory is measured: container-monitor.interval-ms,
// or — empty, as 3.x's yarn-default.xml writes it — resource-monitor.interval-ms (3 s by
// default), as the Java NodeManager reads them.
func monitorInterval(c *conf.Configuration) (time.Duration, error) {
	key := "yarn.nodemanager.container-monitor.interval-ms"
	if v, _ := c.Trimmed(key); v == "" {
		key = "yarn.nodemanager.resource-monitor.interval-ms"
	}
	if v, _ := c.Trimmed(key); v == "" {
		return 3 * time.Second, nil
	}
	return c.Duration(key, time.Millisecond)
}
