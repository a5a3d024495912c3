// Package audit writes the daemons' audit lines in the Java daemons' format
// (RMAuditLogger, NMAuditLogger): tab-separated KEY=value pairs, USER, IP, OPERATION,
// TARGET, RESULT, then for a failure DESCRIPTION and PERMISSIONS, then the ids the
// operation concerns (APPID, APPATTEMPTID, CONTAINERID, QUEUENAME...). Scripts that read
// Java's rm-audit.log read these lines.
//
// Each line goes to the daemon's log under its audit logger's component (the Java
// logger's name under /logLevel: org.apache.hadoop.yarn.server.resourcemanager.RMAuditLogger),
// at INFO for a success and WARN for a failure, with the Java line as its message.
package audit

import (
	"net"
	"strings"

	"github.com/sirupsen/logrus"
)

// The results.
const (
	Success = "SUCCESS"
	Failure = "FAILURE"
)

// Logger writes one daemon's audit lines.
type Logger struct {
	log *logrus.Entry
}

// New is the audit logger of a daemon logging to log; component names it
// ("rmaudit", "nmaudit").
func New(log *logrus.Entry, component string) *Logger {
	if log == nil {
		return nil
	}
	return &Logger{log: log.WithField("component", component)}
}

// KV is one of the ids after the result: APPID, APPATTEMPTID, CONTAINERID, QUEUENAME...
type KV struct{ Key, Value string }

// Line is Java's createSuccessLog/createFailureLog text.
func Line(user, ip, operation, target, result, description, permissions string, ids ...KV) string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	add("USER", user)
	if ip != "" {
		add("IP", ip)
	}
	add("OPERATION", operation)
	add("TARGET", target)
	add("RESULT", result)
	if result == Failure {
		add("DESCRIPTION", description)
		add("PERMISSIONS", permissions)
	}
	for _, id := range ids {
		if id.Value != "" {
			add(id.Key, id.Value)
		}
	}
	return b.String()
}

// IP is a caller's address as the audit line gives it: the host, without the port.
func IP(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// Success writes a successful operation's line.
func (l *Logger) Success(user, ip, operation, target string, ids ...KV) {
	if l == nil {
		return
	}
	l.log.Info(Line(user, ip, operation, target, Success, "", "", ids...))
}

// Failure writes a failed operation's line: why (description) and what it needed
// (permissions).
func (l *Logger) Failure(user, ip, operation, target, description, permissions string, ids ...KV) {
	if l == nil {
		return
	}
	l.log.Warn(Line(user, ip, operation, target, Failure, description, permissions, ids...))
}

// Why is an error's words for DESCRIPTION: a remote exception's message without its
// class, on one line.
func Why(err error) string {
	msg := err.Error()
	// "org.apache.hadoop.yarn.exceptions.YarnException: ...": the class goes.
	if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsAny(msg[:i], " \t") && strings.Contains(msg[:i], ".") {
		msg = msg[i+2:]
	}
	return strings.Join(strings.Fields(msg), " ")
}
