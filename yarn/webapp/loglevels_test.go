package webapp

import (
	"bytes"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

// A level set for a Java logger name applies to the loggers under it, the longest name
// winning, and the root's level to the rest; only the lines a logger lets through are
// written.
func TestPerLoggerLevels(t *testing.T) {
	var out bytes.Buffer
	log := logrus.New()
	log.SetOutput(&out)
	log.SetLevel(logrus.InfoLevel)
	l := NewLevels(log, "org.apache.hadoop.yarn.server.resourcemanager")
	if NewLevels(log, "x") != l {
		t.Fatal("a logger taken over twice")
	}
	l.Set("org.apache.hadoop.yarn.server.resourcemanager.scheduler", logrus.DebugLevel)
	l.Set("org.apache.hadoop.ipc", logrus.ErrorLevel)
	l.Set("borrowed", logrus.WarnLevel) // a Bobbin component's name means its Java logger
	if log.GetLevel() != logrus.DebugLevel {
		t.Errorf("the logger's own level %v: entries at DEBUG must be made", log.GetLevel())
	}
	for name, want := range map[string]logrus.Level{
		"org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler": logrus.DebugLevel,
		"org.apache.hadoop.yarn.server.resourcemanager.scheduler":                            logrus.DebugLevel,
		"org.apache.hadoop.yarn.server.resourcemanager.schedulerx":                           logrus.InfoLevel,
		"org.apache.hadoop.yarn.server.resourcemanager.ResourceManager":                      logrus.InfoLevel,
		"org.apache.hadoop.ipc.Server":                                                       logrus.ErrorLevel,
		"org.apache.hadoop.yarn.server.nodemanager.borrowed":                                 logrus.WarnLevel,
		"scheduler": logrus.DebugLevel,
	} {
		if got := l.Effective(name); got != want {
			t.Errorf("Effective(%s) = %v, want %v", name, got, want)
		}
	}
	log.WithField("component", "scheduler").Debug("scheduler detail")
	log.WithField("component", "resourcemanager").Debug("rm detail")
	log.WithField("server", "ClientRMService").Warn("ipc warning")
	log.WithField("server", "ClientRMService").Error("ipc error")
	log.WithField("component", "resourcemanager").Info("rm info")
	log.Info("root info")
	got := out.String()
	for _, want := range []string{"scheduler detail", "ipc error", "rm info", "root info"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q was dropped:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"rm detail", "ipc warning"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("%q was written past its logger's level:\n%s", unwanted, got)
		}
	}
	// The root's level changes the rest, not the names set.
	l.Set("root", logrus.WarnLevel)
	if l.Effective("org.apache.hadoop.yarn.server.resourcemanager.ResourceManager") != logrus.WarnLevel ||
		l.Effective("org.apache.hadoop.yarn.server.resourcemanager.scheduler") != logrus.DebugLevel {
		t.Error("the root's level reached a logger set by name, or missed one that is not")
	}
	if n := l.Named(); len(n) != 3 || n[0] != "org.apache.hadoop.ipc=ERROR" {
		t.Errorf("Named() = %v", n)
	}
}

// What `yarn daemonlog` prints of /logLevel's answer: the marked lines, tags stripped.
func TestLogLevelPageAsHadoopsClientReadsIt(t *testing.T) {
	var out bytes.Buffer
	log := logrus.New()
	log.SetOutput(&out)
	d := &Daemon{Service: "ResourceManager", Log: log}
	printed := func(query string) string {
		var b strings.Builder
		rec := httptest.NewRecorder()
		d.serveLogLevel(rec, httptest.NewRequest("GET", "/logLevel?"+query, nil))
		if rec.Code != 200 {
			t.Errorf("%s: %d", query, rec.Code)
		}
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(line, logMarker) {
				b.WriteString(tagPattern.ReplaceAllString(line, "") + "\n")
			}
		}
		return b.String()
	}
	got := printed("log=org.apache.hadoop.yarn.server.resourcemanager.scheduler&level=DEBUG")
	want := "Submitted Log Name: org.apache.hadoop.yarn.server.resourcemanager.scheduler\nLog Class: org.apache.log4j.Logger\nSubmitted Level: DEBUG\n" +
		"Setting Level to DEBUG ...\nEffective Level: DEBUG\n"
	if got != want {
		t.Errorf("-setlevel printed:\n%s\nwant:\n%s", got, want)
	}
	if got := printed("log=org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"); !strings.HasSuffix(got, "Effective Level: INFO\n") {
		t.Errorf("-getlevel of a logger not set printed:\n%s", got)
	}
	if got := printed("log=x&level=LOUD"); !strings.Contains(got, "Bad Level : LOUD") {
		t.Errorf("a bad level printed:\n%s", got)
	}
}

// tagPattern is Hadoop's LogLevel.TAG: what the client strips from a marked line.
var tagPattern = regexp.MustCompile(`<[^>]*>`)
