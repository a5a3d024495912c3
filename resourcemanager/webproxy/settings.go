package webproxy

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
)

// Settings are the proxy's keys, which the RM and a standalone proxy share.
type Settings struct {
	Addr    string        // yarn.web-proxy.address, "" when unset (the RM serves the proxy)
	Timeout time.Duration // 0: no timeout
}

// ReadSettings reads yarn.web-proxy.address and the proxy's timeout keys.
func ReadSettings(c *conf.Configuration) (Settings, error) {
	var s Settings
	var errs []error
	addr, err := c.Trimmed("yarn.web-proxy.address")
	if err != nil {
		errs = append(errs, err)
	} else if addr != "" {
		host, port, err := c.HostPort("yarn.web-proxy.address", -1)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.Addr = net.JoinHostPort(host, strconv.Itoa(port))
		}
	}
	on, err := c.Bool("yarn.resourcemanager.proxy.timeout.enabled")
	if err != nil {
		errs = append(errs, err)
	}
	const timeoutKey = "yarn.resourcemanager.proxy.connection.timeout"
	d, err := c.Duration(timeoutKey, time.Millisecond)
	switch {
	case err != nil:
		errs = append(errs, err)
	case on && d <= 0:
		raw, _ := c.Raw(timeoutKey)
		errs = append(errs, &conf.ValueError{Source: c.Source(timeoutKey), Key: timeoutKey, Value: raw, Reason: "must be positive"})
	case on:
		s.Timeout = d
	}
	return s, errors.Join(errs...)
}
