package tokenrenewer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// issuer is a token kind with the rules of Hadoop's AbstractDelegationTokenSecretManager
// in memory: a token lives renewInterval after each renewal, never past its max date;
// only its renewer renews it; a cancelled or expired token is gone.
type issuer struct {
	now           func() time.Time
	renewInterval time.Duration
	maxLifetime   time.Duration

	mu        sync.Mutex
	issued    map[string]time.Time // identifier → max date
	expiry    map[string]time.Time
	renewer   map[string]string
	renewals  map[string]int
	cancelled map[string]bool
}

func newIssuer(now func() time.Time) *issuer {
	return &issuer{now: now, renewInterval: 10 * time.Minute, maxLifetime: time.Hour, issued: map[string]time.Time{},
		expiry: map[string]time.Time{}, renewer: map[string]string{}, renewals: map[string]int{}, cancelled: map[string]bool{}}
}

func (is *issuer) issue(id, renewer string) *token.Token {
	is.mu.Lock()
	defer is.mu.Unlock()
	now := is.now()
	is.issued[id], is.expiry[id], is.renewer[id] = now.Add(is.maxLifetime), now.Add(is.renewInterval), renewer
	return &token.Token{Identifier: []byte(id), Password: []byte("pw"), Kind: "TEST_TOKEN", Service: "127.0.0.1:1"}
}

func (is *issuer) Renew(_ context.Context, t *token.Token) (time.Time, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	id := string(t.Identifier)
	now := is.now()
	switch {
	case is.cancelled[id] || is.issued[id].IsZero():
		return time.Time{}, errors.New("InvalidToken: token can't be found in cache")
	case is.expiry[id].Before(now):
		return time.Time{}, errors.New("InvalidToken: token is expired")
	case is.renewer[id] != "rm":
		return time.Time{}, errors.New("AccessControlException: rm tries to renew a token with renewer " + is.renewer[id])
	}
	exp := now.Add(is.renewInterval)
	if exp.After(is.issued[id]) {
		exp = is.issued[id]
	}
	is.expiry[id] = exp
	is.renewals[id]++
	return exp, nil
}

func (is *issuer) Cancel(_ context.Context, t *token.Token) error {
	is.mu.Lock()
	defer is.mu.Unlock()
	id := string(t.Identifier)
	if is.cancelled[id] {
		return errors.New("InvalidToken: token can't be found in cache")
	}
	is.cancelled[id] = true
	return nil
}

func (is *issuer) MaxDate(t *token.Token) time.Time {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.issued[string(t.Identifier)]
}

func (is *issuer) Describe(t *token.Token) string {
	return "Kind: TEST_TOKEN, Ident: " + string(t.Identifier)
}
func (is *issuer) Manages(*token.Token) bool { return true }

// valid reports whether the token is alive now (not cancelled, not expired).
func (is *issuer) valid(id string) bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	return !is.cancelled[id] && !is.expiry[id].Before(is.now())
}

func setup() (*clock, *issuer, *Renewer) {
	c := &clock{now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	is := newIssuer(c.Now)
	r := New(Options{Kinds: map[string]Kind{"TEST_TOKEN": is}, RemovalDelay: 30 * time.Second, Now: c.Now, Log: testutil.QuietLogger()})
	return c, is, r
}

// step advances the clock to the next due time (at most limit ahead) and runs what is due.
func step(t *testing.T, c *clock, r *Renewer, limit time.Duration) {
	t.Helper()
	next := r.Next()
	if next.IsZero() || next.Sub(c.Now()) > limit {
		c.add(limit)
	} else if d := next.Sub(c.Now()); d > 0 {
		c.add(d)
	}
	r.Due(context.Background())
}

// A running application's token stays alive past many renew intervals, is renewed at
// nine tenths of its remaining life, stops being renewed at its max date, and is
// cancelled the removal delay after the application ends.
func TestTokensStayAliveWhileTheApplicationRunsAndAreCancelledAfter(t *testing.T) {
	c, is, r := setup()
	tok := is.issue("t1", "rm")
	tok2 := &token.Token{Identifier: []byte("other"), Kind: "UNKNOWN_KIND"} // not renewable here: left alone
	if err := r.AddApplication(context.Background(), "app1", "alice", []*token.Token{tok, tok2}, true); err != nil {
		t.Fatal(err)
	}
	if is.renewals["t1"] != 1 {
		t.Fatalf("renewals at submission: %d, want 1", is.renewals["t1"])
	}
	// First renewal is due 9 minutes after submission (10 min life, a tenth left).
	if got := r.Next().Sub(c.Now()); got != 9*time.Minute {
		t.Fatalf("first renewal in %v, want 9m", got)
	}
	start := c.Now()
	for c.Now().Sub(start) < 50*time.Minute {
		step(t, c, r, time.Minute)
		if !is.valid("t1") {
			t.Fatalf("token expired at +%v while its application ran", c.Now().Sub(start))
		}
	}
	n := is.renewals["t1"]
	if n < 5 {
		t.Fatalf("%d renewals in 50 minutes, want >= 5", n)
	}
	// Past the max date (1 h) nothing extends it: renewals stop.
	for c.Now().Sub(start) < 90*time.Minute {
		step(t, c, r, time.Minute)
	}
	if r.Next().IsZero() == false {
		t.Fatalf("renewal still scheduled at %v after the max date", r.Next())
	}
	r.ApplicationFinished("app1")
	c.add(29 * time.Second)
	r.Due(context.Background())
	if is.cancelled["t1"] {
		t.Fatal("cancelled before the removal delay")
	}
	c.add(time.Second)
	r.Due(context.Background())
	if !is.cancelled["t1"] {
		t.Fatal("not cancelled after the removal delay")
	}
	if st := r.Stats(); st.Tokens != 0 || st.Apps != 0 || st.Cancels != 1 || st.Renewals < 6 {
		t.Fatalf("stats %+v", st)
	}
}

// A token that cannot be renewed rejects its application with Java's words and is not
// tracked; nothing of the application's is.
func TestUnrenewableTokenRejectsTheApplication(t *testing.T) {
	_, is, r := setup()
	good := is.issue("good", "rm")
	bad := is.issue("bad", "bob")
	err := r.AddApplication(context.Background(), "app1", "alice", []*token.Token{good, bad}, true)
	var re *RenewError
	if !errors.As(err, &re) {
		t.Fatalf("err %v, want a RenewError", err)
	}
	if !strings.HasPrefix(err.Error(), "Failed to renew token: Kind: TEST_TOKEN, Ident: bad") || !strings.Contains(err.Error(), "renewer bob") {
		t.Fatalf("message %q", err)
	}
	if st := r.Stats(); st.Tokens != 0 || st.Apps != 0 {
		t.Fatalf("tracked after a rejection: %+v", st)
	}
	if !r.Next().IsZero() {
		t.Fatal("a renewal is scheduled for a rejected application")
	}
}

// Two applications share a token: it is renewed once at submission, and cancelled only
// after both end. An application that asks to keep its tokens keeps a shared one too.
func TestSharedTokens(t *testing.T) {
	c, is, r := setup()
	tok := is.issue("shared", "rm")
	for _, app := range []string{"app1", "app2"} {
		if err := r.AddApplication(context.Background(), app, "alice", []*token.Token{tok}, true); err != nil {
			t.Fatal(err)
		}
	}
	if is.renewals["shared"] != 1 {
		t.Fatalf("renewals: %d, want 1", is.renewals["shared"])
	}
	r.ApplicationFinished("app1")
	c.add(time.Minute)
	r.Due(context.Background())
	if is.cancelled["shared"] {
		t.Fatal("cancelled while app2 still runs")
	}
	r.ApplicationFinished("app2")
	c.add(time.Minute)
	r.Due(context.Background())
	if !is.cancelled["shared"] {
		t.Fatal("not cancelled after both ended")
	}

	kept := is.issue("kept", "rm")
	if err := r.AddApplication(context.Background(), "app3", "alice", []*token.Token{kept}, true); err != nil {
		t.Fatal(err)
	}
	if err := r.AddApplication(context.Background(), "app4", "alice", []*token.Token{kept}, false); err != nil {
		t.Fatal(err)
	}
	r.ApplicationFinished("app3")
	r.ApplicationFinished("app4")
	c.add(time.Minute)
	r.Due(context.Background())
	if is.cancelled["kept"] {
		t.Fatal("cancelled though app4 asked for its tokens to be kept")
	}
	if st := r.Stats(); st.Tokens != 0 || st.Apps != 0 {
		t.Fatalf("still tracked: %+v", st)
	}
}

// Run renews on its own clock and stops with its context.
func TestRunRenewsAndStops(t *testing.T) {
	is := newIssuer(time.Now)
	is.renewInterval = 300 * time.Millisecond
	r := New(Options{Kinds: map[string]Kind{"TEST_TOKEN": is}, RemovalDelay: 100 * time.Millisecond, Log: testutil.QuietLogger()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	if err := r.AddApplication(ctx, "app", "alice", []*token.Token{is.issue("t", "rm")}, true); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "fewer than 4 renewals (at submission and timed)", func() bool { return r.Stats().Renewals >= 4 })
	if !is.valid("t") {
		t.Fatal("token expired while renewed by Run")
	}
	r.ApplicationFinished("app")
	testutil.Eventually(t, 10*time.Second, "not cancelled", func() bool { return r.Stats().Cancels >= 1 })
	if r.Stats().Cancels != 1 || is.valid("t") {
		t.Fatal("not cancelled by Run")
	}
	cancel()
	<-done
}
