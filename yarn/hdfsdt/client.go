package hdfsdt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
)

// ClientProtocol is the NameNode protocol the token calls belong to.
const ClientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// haServicePrefix starts the service of a token issued by an HA nameservice
// (HAUtil.buildTokenServiceForLogicalUri: "ha-hdfs:<nameservice>").
const haServicePrefix = "ha-hdfs:"

// KerberosFor is the caller's Kerberos identity towards the NameNode at addr whose
// principal is configured at dfs.namenode.kerberos.principal.
type KerberosFor func(c *conf.Configuration, serverPrincipalKey, addr string) (*rpc.ClientKerberos, error)

// Client renews and cancels HDFS delegation tokens at the NameNodes their service names.
// The NameNode does this only for Kerberos callers ("Delegation Token can be renewed only
// with kerberos or web authentication"), so the client authenticates with Kerberos.
type Client struct {
	conf     *conf.Configuration
	kerberos KerberosFor
	log      *logrus.Entry

	mu    sync.Mutex
	conns map[string]*rpc.Client // by NameNode address
}

// NewClient is a client that reads NameNode addresses and dfs.namenode.kerberos.principal
// from c (hdfs-site.xml's keys) and authenticates with kerberos.
func NewClient(c *conf.Configuration, kerberos KerberosFor, log *logrus.Entry) *Client {
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	return &Client{conf: c, kerberos: kerberos, log: log, conns: map[string]*rpc.Client{}}
}

// Close closes the NameNode connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, cl := range c.conns {
		cl.Close()
		delete(c.conns, addr)
	}
}

// NameNodes are the addresses a token's service names: itself ("127.0.0.1:9000"), or
// every NameNode of an HA nameservice ("ha-hdfs:ns1", from hdfs-site.xml).
func (c *Client) NameNodes(t *token.Token) ([]string, error) {
	if ns, ok := strings.CutPrefix(t.Service, haServicePrefix); ok {
		if ns == "" {
			return nil, fmt.Errorf("token service %q names no nameservice", t.Service)
		}
		return remotefs.NameNodes(c.conf, ns), nil
	}
	if t.Service == "" || !strings.Contains(t.Service, ":") {
		return nil, fmt.Errorf("token service %q is not a NameNode address", t.Service)
	}
	return []string{t.Service}, nil
}

// Renew extends the token and returns its new expiry.
func (c *Client) Renew(ctx context.Context, t *token.Token) (time.Time, error) {
	var resp commonpb.RenewDelegationTokenResponseProto
	if err := c.call(ctx, t, "renewDelegationToken", &commonpb.RenewDelegationTokenRequestProto{Token: t.Proto()}, &resp); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(resp.GetNewExpiryTime())), nil
}

// Cancel cancels the token.
func (c *Client) Cancel(ctx context.Context, t *token.Token) error {
	return c.call(ctx, t, "cancelDelegationToken", &commonpb.CancelDelegationTokenRequestProto{Token: t.Proto()}, &commonpb.CancelDelegationTokenResponseProto{})
}

// call makes one token call at the token's NameNodes in turn, as Java's failover proxy
// does: a standby answers StandbyException and the next is asked.
func (c *Client) call(ctx context.Context, t *token.Token, method string, req, resp proto.Message) error {
	addrs, err := c.NameNodes(t)
	if err != nil {
		return err
	}
	var last error
	for _, addr := range addrs {
		cl, err := c.conn(addr)
		if err != nil {
			return err
		}
		err = cl.Call(ctx, method, req, resp)
		if err == nil {
			return nil
		}
		last = fmt.Errorf("namenode %s: %s: %w", addr, method, err)
		var re *rpc.RemoteError
		if errors.As(err, &re) && re.Class != rpc.ClassStandby {
			return last // the NameNode answered: its answer stands
		}
		if ctx.Err() != nil {
			return last
		}
	}
	return last
}

func (c *Client) conn(addr string) (*rpc.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.conns[addr]; ok {
		return cl, nil
	}
	krb, err := c.kerberos(c.conf, "dfs.namenode.kerberos.principal", addr)
	if err != nil {
		return nil, fmt.Errorf("namenode %s: %w", addr, err)
	}
	cl := rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: ClientProtocol, Kerberos: krb,
		ConnectRetries: 2, RetryInterval: time.Second, DialTimeout: 10 * time.Second, Logger: c.log})
	c.conns[addr] = cl
	return cl, nil
}

// MaxDate is the token's max lifetime from its identifier (zero when it does not decode).
func (c *Client) MaxDate(t *token.Token) time.Time {
	id, err := ParseIdentifier(t.Identifier)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(id.MaxDate)
}

// Describe is the token as Java prints it.
func (c *Client) Describe(t *token.Token) string { return Describe(t) }

// Manages is true: every HDFS delegation token names the NameNode that renews it.
func (c *Client) Manages(*token.Token) bool { return true }
