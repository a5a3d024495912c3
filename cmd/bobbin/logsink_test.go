package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
)

// syncBuffer is a bytes.Buffer safe to read while the sink's flusher writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogSinkHoldsInfoFlushesWarningsAndLosesNothing(t *testing.T) {
	out := &syncBuffer{}
	sink := newLogSink(out)
	log, err := newLogger("info", sink)
	if err != nil {
		t.Fatal(err)
	}
	log.WithField("container", "container_1_0001_01_000001").Info("container allocated")
	log.WithField("node", "h:1").Warn("node lost")
	// The warning flushed everything before it, in order.
	got := out.String()
	if !strings.Contains(got, "container allocated") || !strings.Contains(got, "node lost") ||
		strings.Index(got, "container allocated") > strings.Index(got, "node lost") {
		t.Fatalf("after a warning the sink holds back: %q", got)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				log.WithFields(logrus.Fields{"g": g, "i": i}).Info("line")
			}
		}()
	}
	wg.Wait()
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "msg=line"); n != 4000 {
		t.Fatalf("%d of 4000 lines written", n)
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, "time=") {
			t.Fatalf("torn line %q", l)
		}
	}
}

func TestUrgentLevels(t *testing.T) {
	for line, want := range map[string]bool{
		`time="x" level=info msg=a`:    false,
		`time="x" level=debug msg=a`:   false,
		`time="x" level=warning msg=a`: true,
		`time="x" level=error msg=a`:   true,
		`{"level":"fatal","msg":"a"}`:  true,
		`{"level":"info","msg":"a"}`:   false,
		`no level at all`:              false,
		`time="x" level=`:              false,
	} {
		if urgent([]byte(line)) != want {
			t.Errorf("urgent(%q) != %v", line, want)
		}
	}
}
