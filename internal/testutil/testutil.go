// Package testutil holds helpers the packages' tests share.
package testutil

import (
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// QuietLogger is a logger that discards everything, for daemons started by tests.
// With BOBBIN_TEST_LOG=1 it logs to stderr instead, to debug a failing test.
func QuietLogger() *logrus.Entry {
	l := logrus.New()
	if os.Getenv("BOBBIN_TEST_LOG") == "" {
		l.SetOutput(io.Discard)
	}
	return logrus.NewEntry(l)
}

// Clock is a clock a test moves by hand: daemons built with its Now see time pass only
// when the test calls Advance.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Poll waits until cond holds, checking every 10 ms, for at most within; it reports
// whether cond held. Unlike Eventually it fails nothing, so a goroutine other than the
// test's (a simulated AM) can wait with it and say what went wrong itself.
func Poll(within time.Duration, cond func() bool) bool {
	return PollEvery(within, 10*time.Millisecond, cond)
}

// PollEvery is Poll checking every interval: for a cond that is a call on a daemon (an
// RPC, a web request), which a 10 ms loop would load for nothing.
func PollEvery(within, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// Eventually waits until cond holds, checking every 10 ms, and fails the test with what
// if it does not within the given time. It is for state that other goroutines or
// processes (a daemon, a simulated NodeManager, an AM) change on their own schedule.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
