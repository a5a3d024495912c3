package rpc

import (
	"errors"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/bobbin-yarn/bobbin/internal/kdctest"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// Bobbin's IPC client and server over KERBEROS with a real MIT KDC: the client logs in
// from a keytab, the server names the caller by its principal's short name; a server
// advertising another principal than the client expects is refused with Java's text, and
// a client without Kerberos is refused SIMPLE.
func TestKerberosClientAndServer(t *testing.T) {
	k := kdctest.Start(t, "BOBBIN.TEST")
	rmKT, err := keytab.Load(k.Keytab(t, "rm.keytab", "rm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	nmKT, err := keytab.Load(k.Keytab(t, "nm.keytab", "nm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithKeytab("nm/localhost", k.Realm, nmKT, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatal(err)
	}
	defer cl.Destroy()
	s := startServer(t, ServerOptions{Kerberos: &Kerberos{
		Acceptor: func() *sasl.GSSAPIServer { return sasl.NewGSSAPIServer(rmKT, "rm/localhost", sasl.QOPAuth, 0) },
		Protocol: "rm", ServerID: "localhost",
		ShortName: func(p string) (string, error) {
			return strings.SplitN(strings.SplitN(p, "@", 2)[0], "/", 2)[0], nil
		},
	}})
	c := newTestClient(t, s, ClientOptions{Kerberos: &ClientKerberos{Tickets: sasl.Tickets(cl), ServerPrincipal: "rm/localhost"}})
	for i := 0; i < 2; i++ {
		if got, err := echo(t, c, "q"); err != nil || got != "nm/KERBEROS/q" {
			t.Fatalf("echo over KERBEROS = %q, %v", got, err)
		}
	}
	wrong := newTestClient(t, s, ClientOptions{Kerberos: &ClientKerberos{Tickets: sasl.Tickets(cl), ServerPrincipal: "rm/otherhost"}})
	_, err = echo(t, wrong, "q")
	var re *RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "Server has invalid Kerberos principal: rm/localhost@BOBBIN.TEST") {
		t.Fatalf("server with an unexpected principal: %v", err)
	}
	// A SASL client without Kerberos gives up on the offer as Java's does; one that
	// insists on SIMPLE (auth byte NONE) is refused by the server.
	sasled := newTestClient(t, s, ClientOptions{UseSASL: true})
	if _, err := echo(t, sasled, "q"); err == nil || !strings.Contains(err.Error(), "Client cannot authenticate via:[KERBEROS]") {
		t.Fatalf("SASL client without Kerberos: %v", err)
	}
	simple := newTestClient(t, s, ClientOptions{})
	if _, err := echo(t, simple, "q"); err == nil || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled.  Available:[KERBEROS]") {
		t.Fatalf("SIMPLE client: %v", err)
	}
	// The kerberized connection still serves after the refusals.
	if got, err := echo(t, c, "again"); err != nil || got != "nm/KERBEROS/again" {
		t.Fatalf("echo after refusals = %q, %v", got, err)
	}
}

// With QOP integrity (hadoop.rpc.protection=integrity) every frame after the exchange
// travels in GSS wrap tokens both ways: calls (concurrent ones too) answer as before, and
// a client that allows only authentication finds no common protection.
func TestKerberosIntegrityWrapsTheStream(t *testing.T) {
	k := kdctest.Start(t, "BOBBIN.TEST")
	rmKT, err := keytab.Load(k.Keytab(t, "rm.keytab", "rm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	nmKT, err := keytab.Load(k.Keytab(t, "nm.keytab", "nm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithKeytab("nm/localhost", k.Realm, nmKT, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatal(err)
	}
	defer cl.Destroy()
	s := startServer(t, ServerOptions{Kerberos: &Kerberos{
		Acceptor: func() *sasl.GSSAPIServer { return sasl.NewGSSAPIServer(rmKT, "rm/localhost", sasl.QOPIntegrity, 0) },
		Protocol: "rm", ServerID: "localhost",
		ShortName: func(p string) (string, error) {
			return strings.SplitN(strings.SplitN(p, "@", 2)[0], "/", 2)[0], nil
		},
	}})
	c := newTestClient(t, s, ClientOptions{Kerberos: &ClientKerberos{Tickets: sasl.Tickets(cl), ServerPrincipal: "rm/localhost", QOP: sasl.QOPAuth | sasl.QOPIntegrity}})
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func(i int) {
			q := strings.Repeat("x", i*700) // some answers span several TCP segments
			got, err := echo(t, c, q)
			if err == nil && got != "nm/KERBEROS/"+q {
				err = errors.New("wrong answer")
			}
			errs <- err
		}(i)
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("call over an integrity layer: %v", err)
		}
	}
	authOnly := newTestClient(t, s, ClientOptions{Kerberos: &ClientKerberos{Tickets: sasl.Tickets(cl), ServerPrincipal: "rm/localhost", QOP: sasl.QOPAuth}})
	if _, err := echo(t, authOnly, "q"); err == nil || !strings.Contains(err.Error(), "No common protection layer") {
		t.Fatalf("authentication-only client against an integrity-only server: %v", err)
	}
}
