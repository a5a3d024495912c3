// Package tokenrenewer keeps the delegation tokens that applications submit alive while
// they run and cancels them when they end, as the Java RM's DelegationTokenRenewer does
// on a secure cluster: each token is renewed at submission (a token that cannot be renewed
// fails the application), again when nine tenths of its remaining life have passed, and
// cancelled once no running application refers to it any more (after
// yarn.resourcemanager.delayed.delegation-token.removal-interval-ms), unless an
// application that shared it asked for its tokens to be kept
// (cancel_tokens_when_complete=false, MapReduce's
// mapreduce.job.complete.cancel.delegation.tokens).
//
// The renewer is driven by a clock: Due runs what is due now, Next says when the next
// thing is due; Run is the loop that does both until its context ends.
package tokenrenewer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// Kind renews and cancels the tokens of one kind (HDFS_DELEGATION_TOKEN at its NameNode,
// RM_DELEGATION_TOKEN at this RM).
type Kind interface {
	// Renew extends the token and returns its new expiry.
	Renew(ctx context.Context, t *token.Token) (time.Time, error)
	Cancel(ctx context.Context, t *token.Token) error
	// MaxDate is the token's max lifetime, past which it cannot be renewed (zero:
	// unknown).
	MaxDate(t *token.Token) time.Time
	// Describe is the token as Java's Token.toString prints it.
	Describe(t *token.Token) string
	// Manages is false for a token of the kind that this RM does not renew (an RM
	// delegation token of another cluster's RM): it is left alone.
	Manages(t *token.Token) bool
}

// Options configure a Renewer.
type Options struct {
	// Kinds are the renewable kinds; a token of another kind is left alone, as Java leaves
	// a token whose kind has no TokenRenewer ("not managed").
	Kinds map[string]Kind
	// RemovalDelay is how long a finished application's tokens are kept before they are
	// cancelled (yarn.resourcemanager.delayed.delegation-token.removal-interval-ms): its
	// log aggregation may still need them.
	RemovalDelay time.Duration
	// CallTimeout bounds one renew or cancel call.
	CallTimeout time.Duration
	Now         func() time.Time
	Log         *logrus.Entry
}

// Renewer tracks applications' tokens.
type Renewer struct {
	o Options

	mu       sync.Mutex
	tokens   map[string]*tracked   // by kind, service and identifier
	apps     map[string][]*tracked // by application id
	finished map[string]time.Time  // application → when its tokens are let go
	kick     chan struct{}         // wakes Run when something new is due
	renewals int64                 // renewals made (at submission and timed)
	cancels  int64                 // tokens cancelled
}

// tracked is one token and the applications that submitted it.
type tracked struct {
	tok       *token.Token
	kind      Kind
	apps      map[string]bool
	user      string
	expiry    time.Time
	renewAt   time.Time // zero: not renewed again (at its max date, or renewal failed)
	keepAtEnd bool      // some application asked for it not to be cancelled
}

// New returns a renewer.
func New(o Options) *Renewer {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = time.Minute
	}
	return &Renewer{o: o, tokens: map[string]*tracked{}, apps: map[string][]*tracked{}, finished: map[string]time.Time{},
		kick: make(chan struct{}, 1)}
}

func key(t *token.Token) string {
	return t.Kind + "\x00" + t.Service + "\x00" + string(t.Identifier)
}

// RenewError is a token that could not be renewed when its application was submitted.
type RenewError struct {
	Token string // as Java prints it
	Err   error
}

// Error is the Java RM's diagnostics for such an application ("Failed to renew token:
// Kind: ..., Service: ..., Ident: (...)"), with the cause.
func (e *RenewError) Error() string {
	return fmt.Sprintf("Failed to renew token: %s: %v", e.Token, e.Err)
}
func (e *RenewError) Unwrap() error { return e.Err }

// AddApplication renews every token of a renewable kind that app (submitted by user)
// carries and tracks them until the application finishes; cancelAtEnd is the
// submission's cancel_tokens_when_complete. A token already tracked for another
// application is shared, not renewed again. The first token that cannot be renewed
// fails the call (*RenewError), and then none of app's tokens is tracked.
func (r *Renewer) AddApplication(ctx context.Context, app, user string, tokens []*token.Token, cancelAtEnd bool) error {
	r.mu.Lock()
	if _, ok := r.apps[app]; ok {
		r.mu.Unlock()
		return nil // submitted again (a client's retry): already tracked
	}
	var fresh, shared []*tracked
	for _, t := range tokens {
		kind, ok := r.o.Kinds[t.Kind]
		if !ok || !kind.Manages(t) {
			continue
		}
		if cur, ok := r.tokens[key(t)]; ok {
			shared = append(shared, cur)
			continue
		}
		fresh = append(fresh, &tracked{tok: t, kind: kind, user: user, apps: map[string]bool{}})
	}
	r.mu.Unlock()
	// Renewed outside the lock: a NameNode may be slow, and other applications go on.
	log := r.o.Log.WithFields(logrus.Fields{"application": app, "user": user})
	for _, tr := range fresh {
		exp, err := r.renew(ctx, tr)
		if err != nil {
			log.WithError(err).WithField("token", tr.kind.Describe(tr.tok)).Warn("delegation token could not be renewed; application rejected")
			return &RenewError{Token: tr.kind.Describe(tr.tok), Err: err}
		}
		tr.expiry = exp
	}
	now := r.o.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.apps[app]; ok {
		return nil
	}
	var mine []*tracked
	for _, tr := range fresh {
		if cur, ok := r.tokens[key(tr.tok)]; ok {
			shared = append(shared, cur) // another application's submission got there first
			continue
		}
		tr.renewAt = r.renewTime(tr, now)
		r.tokens[key(tr.tok)] = tr
		mine = append(mine, tr)
		log.WithFields(logrus.Fields{"token": tr.kind.Describe(tr.tok), "expires": tr.expiry.UTC().Format(time.RFC3339),
			"renew_at": tr.renewAt.UTC().Format(time.RFC3339)}).Info("delegation token renewed and tracked")
	}
	for _, tr := range append(mine, shared...) {
		tr.apps[app] = true
		if !cancelAtEnd {
			tr.keepAtEnd = true
		}
	}
	r.apps[app] = append(mine, shared...)
	r.wake()
	return nil
}

// renew makes one renew call, bounded by the call timeout.
func (r *Renewer) renew(ctx context.Context, tr *tracked) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	exp, err := tr.kind.Renew(ctx, tr.tok)
	if err == nil {
		r.mu.Lock()
		r.renewals++
		r.mu.Unlock()
	}
	return exp, err
}

// renewTime is when a token that expires at tr.expiry is renewed next: when nine tenths
// of its remaining life have passed (Java's setTimerForTokenRenewal); never once its
// expiry is its max date, since a renewal could not extend it.
func (r *Renewer) renewTime(tr *tracked, now time.Time) time.Time {
	if max := tr.kind.MaxDate(tr.tok); !max.IsZero() && !tr.expiry.Before(max) {
		return time.Time{}
	}
	left := tr.expiry.Sub(now)
	if left < 0 {
		left = 0
	}
	return tr.expiry.Add(-left / 10)
}

// ApplicationFinished lets app's tokens go after the removal delay: those no other
// running application shares are then cancelled (or only forgotten, when an application
// asked for them to be kept).
func (r *Renewer) ApplicationFinished(app string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.apps[app]; !ok {
		return
	}
	if _, ok := r.finished[app]; !ok {
		r.finished[app] = r.o.Now().Add(r.o.RemovalDelay)
		r.wake()
	}
}

func (r *Renewer) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Next is when something is next due (zero: nothing is).
func (r *Renewer) Next() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var next time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, tr := range r.tokens {
		earlier(tr.renewAt)
	}
	for _, at := range r.finished {
		earlier(at)
	}
	return next
}

// Due renews the tokens whose time has come and lets finished applications' tokens go.
// A token whose renewal fails is not renewed again (Java: "Not rescheduled"); it stays
// tracked so that it is still cancelled at the end.
func (r *Renewer) Due(ctx context.Context) {
	now := r.o.Now()
	r.mu.Lock()
	type due struct {
		tr   *tracked
		apps []string
	}
	var renew []due
	for _, tr := range r.tokens {
		if !tr.renewAt.IsZero() && !tr.renewAt.After(now) {
			tr.renewAt = time.Time{} // in hand
			renew = append(renew, due{tr, tr.appList()})
		}
	}
	var ended []string
	for app, at := range r.finished {
		if !at.After(now) {
			ended = append(ended, app)
		}
	}
	sort.Strings(ended)
	var cancel []*tracked
	for _, app := range ended {
		delete(r.finished, app)
		for _, tr := range r.apps[app] {
			delete(tr.apps, app)
			if len(tr.apps) == 0 {
				delete(r.tokens, key(tr.tok))
				tr.renewAt = time.Time{}
				cancel = append(cancel, tr)
			}
		}
		delete(r.apps, app)
	}
	r.mu.Unlock()

	for _, d := range renew {
		tr := d.tr
		log := r.o.Log.WithFields(logrus.Fields{"token": tr.kind.Describe(tr.tok), "applications": d.apps})
		exp, err := r.renew(ctx, tr)
		r.mu.Lock()
		if _, still := r.tokens[key(tr.tok)]; !still {
			r.mu.Unlock()
			continue // its applications ended meanwhile
		}
		if err != nil {
			r.mu.Unlock()
			log.WithError(err).Warn("delegation token renewal failed; not renewed again")
			continue
		}
		tr.expiry = exp
		tr.renewAt = r.renewTime(tr, r.o.Now())
		r.mu.Unlock()
		log.WithField("expires", exp.UTC().Format(time.RFC3339)).Info("delegation token renewed")
	}
	for _, tr := range cancel {
		log := r.o.Log.WithFields(logrus.Fields{"token": tr.kind.Describe(tr.tok), "user": tr.user})
		if tr.keepAtEnd {
			log.Info("delegation token no longer tracked (kept: an application asked for it not to be cancelled)")
			continue
		}
		cctx, done := context.WithTimeout(ctx, r.o.CallTimeout)
		err := tr.kind.Cancel(cctx, tr.tok)
		done()
		if err != nil {
			log.WithError(err).Warn("delegation token cancellation failed")
			continue
		}
		r.mu.Lock()
		r.cancels++
		r.mu.Unlock()
		log.Info("delegation token cancelled")
	}
}

// appList is the token's applications, sorted (for logs); r.mu is held.
func (tr *tracked) appList() []string {
	out := make([]string, 0, len(tr.apps))
	for a := range tr.apps {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Run renews and lets go as things come due until ctx ends.
func (r *Renewer) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		r.Due(ctx)
		wait := time.Hour
		if next := r.Next(); !next.IsZero() {
			wait = max(next.Sub(r.o.Now()), 10*time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		case <-timer.C:
		}
	}
}

// Stats are the renewer's figures.
type Stats struct {
	Tokens, Apps      int
	Renewals, Cancels int64
}

// Stats reports what is tracked and done so far.
func (r *Renewer) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Tokens: len(r.tokens), Apps: len(r.apps), Renewals: r.renewals, Cancels: r.cancels}
}

// ErrNotTracked is returned by Expiry for a token that is not tracked.
var ErrNotTracked = errors.New("tokenrenewer: token not tracked")

// Expiry is a tracked token's expiry as last renewed.
func (r *Renewer) Expiry(t *token.Token) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tr, ok := r.tokens[key(t)]
	if !ok {
		return time.Time{}, ErrNotTracked
	}
	return tr.expiry, nil
}

// Forget drops app's tokens at once, without cancelling any: the application was never
// recorded (its submission failed after its tokens were renewed).
func (r *Renewer) Forget(app string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, tr := range r.apps[app] {
		delete(tr.apps, app)
		if len(tr.apps) == 0 {
			delete(r.tokens, key(tr.tok))
		}
	}
	delete(r.apps, app)
	delete(r.finished, app)
}
