package sasl

import (
	"crypto/md5"
	"errors"
	"strings"
	"testing"
)

// A complete exchange recorded between the JDK 17 DIGEST-MD5 client and server
// (javax.security.sasl, protocol "", serverName "default", qop auth), the same
// implementation the Hadoop client uses.
const (
	katUser      = "CgYKAggBEAEQAQ=="
	katPassword  = "c2VjcmV0LXBhc3N3b3JkLWJ5dGVz"
	katNonce     = "E7PUBlVc16aR+shYjMTFH+JTSxJvlMKkzZZLNfyY"
	katCNonce    = "3ujW8sBtWxYlXej3nVNUGb0rCu62r1CLK/KeI0W/"
	katChallenge = `realm="default",nonce="E7PUBlVc16aR+shYjMTFH+JTSxJvlMKkzZZLNfyY",qop="auth",charset=utf-8,algorithm=md5-sess`
	katResponse  = `charset=utf-8,username="CgYKAggBEAEQAQ==",realm="default",nonce="E7PUBlVc16aR+shYjMTFH+JTSxJvlMKkzZZLNfyY",nc=00000001,cnonce="3ujW8sBtWxYlXej3nVNUGb0rCu62r1CLK/KeI0W/",digest-uri="/default",maxbuf=65536,response=df0e5707a1c2539ffce5c2a2801c667a,qop=auth`
	katFinal     = `rspauth=96c3371589b4f0d678aa9fe39db9323a`
)

func katPasswords(user string) (string, error) {
	if user != katUser {
		return "", errors.New("unknown user")
	}
	return katPassword, nil
}

func TestServerChallengeMatchesJDK(t *testing.T) {
	if got := string(NewServerWithNonce(katNonce).Challenge()); got != katChallenge {
		t.Fatalf("challenge\n got %s\nwant %s", got, katChallenge)
	}
}

func TestServerVerifiesJDKResponse(t *testing.T) {
	user, final, err := NewServerWithNonce(katNonce).Verify([]byte(katResponse), katPasswords)
	if err != nil {
		t.Fatal(err)
	}
	if user != katUser || string(final) != katFinal {
		t.Fatalf("user %q final %q", user, final)
	}
}

func TestClientResponseMatchesJDK(t *testing.T) {
	c := &Client{User: katUser, Password: katPassword, CNonce: katCNonce}
	resp, err := c.Respond([]byte(katChallenge))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp) != katResponse {
		t.Fatalf("response\n got %s\nwant %s", resp, katResponse)
	}
	if err := c.VerifyFinal([]byte(katFinal)); err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyFinal([]byte("rspauth=00000000000000000000000000000000")); err == nil {
		t.Fatal("wrong rspauth accepted")
	}
}

// The formulas of protocol.md §2.2 written out step by step, independently of
// ResponseValue's helpers.
func TestFormulaByHand(t *testing.T) {
	inner := md5raw(katUser + ":default:" + katPassword)
	ha1 := md5hex(inner + ":" + katNonce + ":" + katCNonce)
	resp := md5hex(ha1 + ":" + katNonce + ":00000001:" + katCNonce + ":auth:" + md5hex("AUTHENTICATE:/default"))
	if !strings.Contains(katResponse, "response="+resp+",") {
		t.Fatalf("hand-computed response %s not in JDK response", resp)
	}
	rsp := md5hex(ha1 + ":" + katNonce + ":00000001:" + katCNonce + ":auth:" + md5hex(":/default"))
	if "rspauth="+rsp != katFinal {
		t.Fatalf("hand-computed rspauth %s", rsp)
	}
}

func TestServerRejects(t *testing.T) {
	cases := map[string]string{
		"wrong password":  strings.Replace(katResponse, "response=df0e", "response=ff0e", 1),
		"wrong nonce":     strings.Replace(katResponse, "E7PU", "X7PU", 1),
		"wrong uri":       strings.Replace(katResponse, `"/default"`, `"/other"`, 1),
		"wrong nc":        strings.Replace(katResponse, "nc=00000001", "nc=00000002", 1),
		"qop auth-int":    strings.Replace(katResponse, "qop=auth", "qop=auth-int", 1),
		"missing cnonce":  strings.Replace(katResponse, `cnonce="3ujW8sBtWxYlXej3nVNUGb0rCu62r1CLK/KeI0W/",`, "", 1),
		"unterminated":    `username="abc`,
		"no value":        `username`,
		"duplicate":       `nc=1,nc=2`,
		"unknown user":    strings.Replace(katResponse, katUser, "bm9ib2R5", 1),
		"garbage between": `username="a" x`,
	}
	for name, resp := range cases {
		if _, _, err := NewServerWithNonce(katNonce).Verify([]byte(resp), katPasswords); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseDirectivesQuoting(t *testing.T) {
	d, err := ParseDirectives([]byte(` a = "x\"y" ,, b=plain,c=""`))
	if err != nil {
		t.Fatal(err)
	}
	if d["a"] != `x"y` || d["b"] != "plain" || d["c"] != "" {
		t.Fatalf("%#v", d)
	}
}

func FuzzParseDirectives(f *testing.F) {
	f.Add([]byte(katChallenge))
	f.Add([]byte(katResponse))
	f.Add([]byte(katFinal))
	f.Add([]byte(`a="\`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDirectives(data)
		if err != nil {
			return
		}
		// Re-encoding every value quoted must parse back to the same directives.
		var parts []string
		for k, v := range d {
			parts = append(parts, k+"="+quote(v))
		}
		enc := strings.Join(parts, ",")
		if len(enc) > maxMessage {
			return // quoting can lengthen a message past the limit
		}
		again, err := ParseDirectives([]byte(enc))
		if err != nil {
			t.Fatalf("re-parse failed: %v", err)
		}
		for k, v := range d {
			if again[k] != v {
				t.Fatalf("%q: %q != %q", k, again[k], v)
			}
		}
	})
}

func FuzzServerVerify(f *testing.F) {
	f.Add([]byte(katResponse))
	f.Add([]byte(`username="x",nonce="E7PUBlVc16aR+shYjMTFH+JTSxJvlMKkzZZLNfyY"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		user, final, err := NewServerWithNonce(katNonce).Verify(data, katPasswords)
		if err == nil && (user != katUser || len(final) == 0) {
			t.Fatalf("accepted %q as %q", data, user)
		}
	})
}

func md5raw(s string) string {
	h := md5.Sum([]byte(s))
	return string(h[:])
}
