package rmcore

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/delegation"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/tokenrenewer"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/hdfsdt"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

// rmLogin is the RM's own Kerberos login (yarn.resourcemanager.principal and keytab) for
// the calls it makes as a client: renewing and cancelling applications' HDFS tokens at
// their NameNodes. It logs in on first use: an RM whose applications bring no HDFS token
// never needs it.
type rmLogin struct {
	conf *conf.Configuration
	host string
	reg  metrics.Registry // times the logins (UgiMetrics)

	mu    sync.Mutex
	login *kerberos.Login
}

func (l *rmLogin) clientFor(c *conf.Configuration, serverPrincipalKey, addr string) (*rpc.ClientKerberos, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.login == nil {
		login, err := kerberos.LoginFromConf(l.conf, "yarn.resourcemanager.principal", "yarn.resourcemanager.keytab", l.host, l.reg)
		if err != nil {
			return nil, err
		}
		l.login = login
	}
	return l.login.ClientFor(c, serverPrincipalKey, addr)
}

func (l *rmLogin) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.login != nil {
		l.login.Close()
		l.login = nil
	}
}

// startTokenRenewer creates, on a secure cluster, the renewer of the delegation tokens
// applications submit, as the Java RM's DelegationTokenRenewer runs only with Kerberos
// (the NameNode renews tokens only for Kerberos callers). It needs the delegation
// manager: it renews this RM's own tokens too.
func (rm *Core) startTokenRenewer() {
	if !rm.settings.Kerberos {
		return
	}
	host, _, _ := net.SplitHostPort(rm.settings.ClientAddr)
	rm.login = &rmLogin{conf: rm.opts.Conf, host: host, reg: rm.opts.Metrics}
	log := rm.log.WithField("service", "delegation-token-renewer")
	rm.hdfsTokens = hdfsdt.NewClient(rm.opts.Conf, rm.login.clientFor, log)
	rm.tokens = tokenrenewer.New(tokenrenewer.Options{
		Kinds:        map[string]tokenrenewer.Kind{hdfsdt.Kind: rm.hdfsTokens, delegation.Kind: delegation.Local{M: rm.delegation}},
		RemovalDelay: rm.settings.TokenRemovalDelay,
		Now:          rm.opts.Now,
		Log:          log,
	})
}

// submittedTokens are the delegation tokens in an application's AM launch context (the
// credentials a client puts there for the AM and its tasks).
func submittedTokens(sc *yarnpb.ApplicationSubmissionContextProto) ([]*token.Token, error) {
	b := sc.GetAmContainerSpec().GetTokens()
	if len(b) == 0 {
		return nil, nil
	}
	creds, err := token.ReadCredentials(b)
	if err != nil {
		return nil, err
	}
	aliases := make([]string, 0, len(creds.Tokens))
	for alias := range creds.Tokens {
		aliases = append(aliases, alias)
	}
	sort.Strings(aliases)
	out := make([]*token.Token, 0, len(aliases))
	for _, alias := range aliases {
		out = append(out, creds.Tokens[alias])
	}
	return out, nil
}

// trackTokens renews a submitted application's tokens and keeps them renewed (nothing
// without Kerberos); the error is the application's rejection.
func (rm *Core) trackTokens(ctx context.Context, id records.ApplicationID, user string, sc *yarnpb.ApplicationSubmissionContextProto) error {
	if rm.tokens == nil {
		return nil
	}
	toks, err := submittedTokens(sc)
	if err != nil {
		return fmt.Errorf("credentials of %s: %w", id, err)
	}
	return rm.tokens.AddApplication(ctx, id.String(), user, toks, sc.GetCancelTokensWhenComplete())
}

// trackRecoveredTokens tracks again the tokens of the applications a restart recovered
// that have not finished, as the Java RM does on recovery. A token that no longer renews
// is logged; the application goes on (its tasks may not need it any more).
func (rm *Core) trackRecoveredTokens(ctx context.Context) {
	type app struct {
		id   records.ApplicationID
		user string
		sc   *yarnpb.ApplicationSubmissionContextProto
	}
	var apps []app
	rm.apps.Each(func(a *rmstate.App) {
		if !a.Finished() && a.AMSpec != nil {
			cancel := !a.KeepTokens
			apps = append(apps, app{a.ID, a.User, &yarnpb.ApplicationSubmissionContextProto{AmContainerSpec: a.AMSpec, CancelTokensWhenComplete: &cancel}})
		}
	})
	for _, a := range apps {
		if err := rm.trackTokens(ctx, a.id, a.user, a.sc); err != nil {
			rm.log.WithError(err).WithFields(map[string]any{"application": a.id.String(), "user": a.user}).
				Warn("delegation tokens of a recovered application could not be renewed")
		}
	}
}
