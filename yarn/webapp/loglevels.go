package webapp

import (
	"sort"
	"strings"
	"sync"

	"github.com/sirupsen/logrus"
)

// Per-logger levels, as log4j's under the Java daemons' /logLevel: each log line belongs
// to a logger named as the Java class that would have written it (by its component
// field), and a level set for a name applies to every logger under it (name.*), the
// longest set name winning, the root's level to the rest. Operators name Java's
// packages and classes (`yarn daemonlog -setlevel rm:8088
// org.apache.hadoop.yarn.server.resourcemanager.scheduler DEBUG`); Bobbin's component
// names work too.

// componentLoggers are the Java logger names of Bobbin's log components.
var componentLoggers = map[string]string{
	"resourcemanager": "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
	"scheduler":       "org.apache.hadoop.yarn.server.resourcemanager.scheduler",
	"rmstate":         "org.apache.hadoop.yarn.server.resourcemanager.recovery",
	"nodemanager":     "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
	"borrowed":        "org.apache.hadoop.yarn.server.nodemanager.borrowed",
	"elastic-memory":  "org.apache.hadoop.yarn.server.nodemanager.containermanager.linux.resources.CGroupElasticMemoryController",
	"logaggregation":  "org.apache.hadoop.yarn.server.nodemanager.containermanager.logaggregation",
	"webproxy":        "org.apache.hadoop.yarn.server.webproxy",
	"elector":         "org.apache.hadoop.ha.ActiveStandbyElector",
	"ipc":             "org.apache.hadoop.ipc.Server",
	"rmaudit":         "org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger",
	"nmaudit":         "org.apache.hadoop.yarn.server.nodemanager.NMAuditLogger",
}

// LoggerOf is the Java logger name of a log entry: its component's, the IPC server's for
// a server's lines, else the daemon's root.
func LoggerOf(fields logrus.Fields, root string) string {
	if c, ok := fields["component"].(string); ok {
		if n, ok := componentLoggers[c]; ok {
			return n
		}
		return root + "." + c
	}
	if _, ok := fields["server"]; ok {
		return componentLoggers["ipc"]
	}
	return root
}

// Levels are a daemon's per-logger levels over its logrus logger: the logger's own
// level is the most verbose of them (so that entries are made), and its formatter drops
// the lines a logger's effective level does not let through.
type Levels struct {
	root string // the daemon's root logger name (org.apache.hadoop.yarn.server.resourcemanager)

	mu    sync.RWMutex
	log   *logrus.Logger
	base  logrus.Level            // the root logger's level
	named map[string]logrus.Level // levels set by name
}

// NewLevels takes over log's level filtering (its level becomes the root's) and wraps its
// formatter; a logger already taken over keeps its Levels.
func NewLevels(log *logrus.Logger, root string) *Levels {
	if f, ok := log.Formatter.(*levelFormatter); ok {
		return f.levels
	}
	l := &Levels{root: root, log: log, base: log.GetLevel(), named: map[string]logrus.Level{}}
	log.SetFormatter(&levelFormatter{inner: log.Formatter, levels: l})
	return l
}

// canonical is the logger name a submitted name means: a component's Java name for a
// Bobbin component name, else the name itself ("root" and "" are the root logger).
func canonical(name string) string {
	if n, ok := componentLoggers[name]; ok {
		return n
	}
	return strings.TrimSpace(name)
}

// Effective is the level of logger name: the longest set name it is under, else the
// root's.
func (l *Levels) Effective(name string) logrus.Level {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.effectiveLocked(canonical(name))
}

func (l *Levels) effectiveLocked(name string) logrus.Level {
	best, lv := -1, l.base
	for n, v := range l.named {
		if (name == n || strings.HasPrefix(name, n+".")) && len(n) > best {
			best, lv = len(n), v
		}
	}
	return lv
}

// Set sets logger name's level ("root" or "": the root's, which also clears nothing
// else, as log4j).
func (l *Levels) Set(name string, lv logrus.Level) {
	name = canonical(name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if name == "" || name == "root" {
		l.base = lv
	} else {
		l.named[name] = lv
	}
	most := l.base
	for _, v := range l.named {
		most = max(most, v)
	}
	l.log.SetLevel(most)
}

// Named lists the levels set by name, sorted (the page shows them).
func (l *Levels) Named() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]string, 0, len(l.named))
	for n, v := range l.named {
		out = append(out, n+"="+javaLevel(v))
	}
	sort.Strings(out)
	return out
}

// Enabled says entry e passes its logger's level.
func (l *Levels) Enabled(e *logrus.Entry) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if len(l.named) == 0 {
		return e.Level <= l.base
	}
	return e.Level <= l.effectiveLocked(LoggerOf(e.Data, l.root))
}

// levelFormatter writes only the entries their loggers' levels let through.
type levelFormatter struct {
	inner  logrus.Formatter
	levels *Levels
}

func (f *levelFormatter) Format(e *logrus.Entry) ([]byte, error) {
	if !f.levels.Enabled(e) {
		return nil, nil
	}
	return f.inner.Format(e)
}
