package nodemanager

import (
	"errors"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
)

// ShuffleSettings are the mapreduce_shuffle service's mapreduce.shuffle.* keys, which
// the Java NodeManager's shuffle reads from mapred-site.xml (its JobConf) as well as
// yarn-site.xml.
type ShuffleSettings struct {
	MaxConnections, MaxThreads, BufferSize int
	KeepAlive                              bool
	KeepAliveTimeout                       time.Duration
}

func readShuffleSettings(c *conf.Configuration) (ShuffleSettings, error) {
	var s ShuffleSettings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	s.MaxConnections, err = c.Int("mapreduce.shuffle.max.connections")
	add(err)
	s.MaxThreads, err = c.Int("mapreduce.shuffle.max.threads")
	add(err)
	s.BufferSize, err = c.Int("mapreduce.shuffle.transfer.buffer.size")
	add(err)
	s.KeepAlive, err = c.Bool("mapreduce.shuffle.connection-keep-alive.enable")
	add(err)
	s.KeepAliveTimeout, err = c.Duration("mapreduce.shuffle.connection-keep-alive.timeout", time.Second)
	add(err)
	ssl, err := c.Bool("mapreduce.shuffle.ssl.enabled")
	add(err)
	if ssl {
		raw, _ := c.Raw("mapreduce.shuffle.ssl.enabled")
		add(&conf.ValueError{Source: c.Source("mapreduce.shuffle.ssl.enabled"), Key: "mapreduce.shuffle.ssl.enabled", Value: raw,
			Reason: "an encrypted shuffle (HTTPS with the ssl-server.xml keystore) is not supported by Bobbin's NodeManager"})
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"mapreduce.shuffle.max.connections", s.MaxConnections}, {"mapreduce.shuffle.max.threads", s.MaxThreads}, {"mapreduce.shuffle.transfer.buffer.size", s.BufferSize}} {
		if k.v < 0 {
			raw, _ := c.Raw(k.key)
			add(&conf.ValueError{Source: c.Source(k.key), Key: k.key, Value: raw, Reason: "must not be negative"})
		}
	}
	return s, errors.Join(errs...)
}
