package token

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// RFC 2202 test case 2 for HMAC-SHA1.
func TestPasswordIsHmacSHA1(t *testing.T) {
	got := hex.EncodeToString(Password([]byte("Jefe"), []byte("what do ya want for nothing?")))
	if got != "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" {
		t.Fatalf("Password = %s", got)
	}
}

func sample() *Credentials {
	c := NewCredentials()
	c.Tokens["JobToken"] = &Token{Identifier: []byte("\x0ejob_1_0001"), Password: []byte{1, 2, 3}, Kind: KindJob, Service: "job_1_0001"}
	c.Tokens[""] = &Token{Identifier: []byte{0x0a, 0x06, 0x0a, 0x02, 0x08, 0x01, 0x10, 0x01}, Password: bytes.Repeat([]byte{7}, 20), Kind: KindAMRM}
	c.Secrets["MapReduceShuffleToken"] = []byte("8bytekey")
	return c
}

func TestCredentialsWritableRoundTrip(t *testing.T) {
	c := sample()
	b := c.Bytes()
	if !bytes.HasPrefix(b, []byte("HDTS\x00\x02")) {
		t.Fatalf("header % x", b[:6])
	}
	back, err := ReadCredentials(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), b) {
		t.Fatal("version-0 round trip changed the bytes")
	}
	if got := back.Tokens[""]; got == nil || got.Kind != KindAMRM || len(got.Password) != 20 {
		t.Fatalf("AMRM token lost: %+v", got)
	}
	if string(back.Secrets["MapReduceShuffleToken"]) != "8bytekey" {
		t.Fatal("secret lost")
	}
	if n := len(back.ByKind(KindJob)); n != 1 {
		t.Fatalf("ByKind(job) = %d tokens", n)
	}
}

func TestCredentialsProtoVersionRead(t *testing.T) {
	c := sample()
	pb, err := c.ProtoBytes()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadCredentials(pb)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), c.Bytes()) {
		t.Fatal("version-1 read differs from the original")
	}
}

// A version-0 file as Hadoop writes it for one token, built byte by byte.
func TestCredentialsKnownBytes(t *testing.T) {
	raw := []byte("HDTS\x00" +
		"\x01" + // one token
		"\x03abc" + // alias
		"\x02\x01\x02" + "\x01\x09" + "\x04kind" + "\x07svc:123" +
		"\x00") // no secrets
	c, err := ReadCredentials(raw)
	if err != nil {
		t.Fatal(err)
	}
	tok := c.Tokens["abc"]
	if tok == nil || tok.Kind != "kind" || tok.Service != "svc:123" || !bytes.Equal(tok.Identifier, []byte{1, 2}) || !bytes.Equal(tok.Password, []byte{9}) {
		t.Fatalf("parsed %+v", tok)
	}
	if !bytes.Equal(c.Bytes(), raw) {
		t.Fatalf("rewrite = %q", c.Bytes())
	}
}

func TestCredentialsRejectsGarbage(t *testing.T) {
	for _, in := range [][]byte{nil, []byte("HDT"), []byte("XXXX\x00\x00\x00"), []byte("HDTS\x02"), []byte("HDTS\x00\x05"), []byte("HDTS\x00\x8c\x7f\xff\xff\xff")} {
		if _, err := ReadCredentials(in); err == nil {
			t.Errorf("ReadCredentials(%q) accepted", in)
		}
	}
}

func FuzzReadCredentials(f *testing.F) {
	f.Add(sample().Bytes())
	pb, _ := sample().ProtoBytes()
	f.Add(pb)
	f.Add([]byte("HDTS\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCredentials(data)
		if err != nil {
			return
		}
		// Whatever parsed must survive a write and re-read unchanged.
		again, err := ReadCredentials(c.Bytes())
		if err != nil {
			t.Fatalf("re-read of written credentials failed: %v", err)
		}
		if !bytes.Equal(again.Bytes(), c.Bytes()) {
			t.Fatal("write/read not stable")
		}
	})
}
