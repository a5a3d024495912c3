package sasl

import (
	"encoding/hex"
	"testing"
)

// Known answers from the JDK 17 DIGEST-MD5 client and server (auth-conf, user "userid",
// realm "default", password "secretpw"): the client's wraps of "hello world" (sequence 0
// and 1) and the server's of "0123456789abcdef" byte for byte, each side unwrapping the
// other's.
func TestDigestPrivacyMatchesTheJDK(t *testing.T) {
	for _, tc := range []struct {
		cipher, nonce, cnonce string
		c2s, s2c              []string
	}{
		{"3des", "b5kH8Ca+xihUwbtIMchY1eXxIGQ+owzdjka4WRxu", "InU1T0t5Qab0FB5Ro1nTJkbqX7VMt8Sa8jmtn+qq",
			[]string{"9194fd3b4cd228780b2503ecb382786d5d096a223d10b546000100000000", "b15d8905e6a8c04a3baf57176b706c9acad4d99803c9a749000100000001"},
			[]string{"63489bfc7d3097af268372e43066881b58467486534e89658eca0a799faa08cf000100000000", "0107cc11a7ff56e4761a75256b29c7390a526f4fcd32f345703136b06c26e632000100000001"}},
		{"rc4", "5+LfoKAooPDP3yF09WfQR/y5EnwTBVRw7QDRYqVS", "CUCEI9xG8KbxojRiu0BUWK+rGU0aaGRl0hI38SrO",
			[]string{"77e26d23777ccbed3b367eb8ccdd106b312a9b9ce5000100000000", "f8aa652af38c6ea1c9acd297f5d70852a04792fac5000100000001"},
			[]string{"f0f1475eb8165d8423b1fe9d003193af06297fe36bc5b011d0d3000100000000"}},
	} {
		h := ha1Raw("userid", "default", "secretpw", tc.nonce, tc.cnonce)
		client, err := newDigestLayer(h, true, tc.cipher)
		if err != nil {
			t.Fatal(err)
		}
		server, _ := newDigestLayer(h, false, tc.cipher)
		for i, want := range tc.c2s {
			got, _ := client.Wrap([]byte("hello world"))
			if hex.EncodeToString(got) != want {
				t.Fatalf("%s: client wrap %d = %x, JDK %s", tc.cipher, i, got, want)
			}
			p, err := server.Unwrap(got)
			if err != nil || string(p) != "hello world" {
				t.Fatalf("%s: server unwrap %d: %q %v", tc.cipher, i, p, err)
			}
		}
		for i, want := range tc.s2c {
			got, _ := server.Wrap([]byte("0123456789abcdef"))
			if hex.EncodeToString(got) != want {
				t.Fatalf("%s: server wrap %d = %x, JDK %s", tc.cipher, i, got, want)
			}
			p, err := client.Unwrap(got)
			if err != nil || string(p) != "0123456789abcdef" {
				t.Fatalf("%s: client unwrap %d: %q %v", tc.cipher, i, p, err)
			}
		}
	}
}

// Every cipher and integrity round-trip through a whole exchange; a tampered or
// replayed token is refused.
func TestDigestLayersRoundTrip(t *testing.T) {
	for _, qop := range []byte{QOPIntegrity, QOPPrivacy} {
		s := NewServer()
		s.QOP = QOPAuth | QOPIntegrity | QOPPrivacy
		c := &Client{User: "u", Password: "p", QOP: qop}
		resp, err := c.Respond(s.Challenge())
		if err != nil {
			t.Fatal(err)
		}
		_, final, err := s.Verify(resp, func(string) (string, error) { return "p", nil })
		if err != nil || c.VerifyFinal(final) != nil {
			t.Fatalf("qop %d: %v", qop, err)
		}
		cl, err := c.Layer()
		if err != nil || cl == nil || s.Layer() == nil {
			t.Fatalf("qop %d: layers %v %v", qop, cl, err)
		}
		for _, msg := range []string{"", "a", "exactly 14 b..", "a longer message that spans several blocks of the cipher"} {
			w, _ := cl.Wrap([]byte(msg))
			p, err := s.Layer().Unwrap(w)
			if err != nil || string(p) != msg {
				t.Fatalf("qop %d %q: %q %v", qop, msg, p, err)
			}
			w, _ = s.Layer().Wrap([]byte(msg))
			if p, err = cl.Unwrap(w); err != nil || string(p) != msg {
				t.Fatalf("qop %d back %q: %q %v", qop, msg, p, err)
			}
			if _, err := cl.Unwrap(w); err == nil {
				t.Fatalf("qop %d: replayed token accepted", qop)
			}
		}
		w, _ := cl.Wrap([]byte("tamper"))
		w[0] ^= 1
		if _, err := s.Layer().Unwrap(w); err == nil {
			t.Fatalf("qop %d: tampered token accepted", qop)
		}
	}
	for _, name := range digestCiphers {
		h := ha1Raw("u", "default", "p", "n", "c")
		a, err1 := newDigestLayer(h, true, name)
		b, err2 := newDigestLayer(h, false, name)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", name, err1, err2)
		}
		for i := 0; i < 3; i++ {
			w, _ := a.Wrap([]byte("payload"))
			if p, err := b.Unwrap(w); err != nil || string(p) != "payload" {
				t.Fatalf("%s: %q %v", name, p, err)
			}
		}
	}
}

// FuzzDigestUnwrap: arbitrary tokens never panic a layer of any kind.
func FuzzDigestUnwrap(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 22))
	f.Add(make([]byte, 30))
	f.Fuzz(func(t *testing.T, tok []byte) {
		h := ha1Raw("u", "default", "p", "n", "c")
		for _, name := range append([]string{""}, digestCiphers...) {
			l, _ := newDigestLayer(h, false, name)
			l.Unwrap(tok)
		}
	})
}
