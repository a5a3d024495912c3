package hdfsdt

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// An identifier in the NameNode's Writable form is decoded and written back byte for byte;
// TestKerberosHDFSTokenRenewal decodes ones a real 2.7.3 NameNode issued.
func TestIdentifierRoundTrip(t *testing.T) {
	id := &Identifier{Owner: "alice@BOBBIN.TEST", Renewer: "rm", IssueDate: 1795570307457, MaxDate: 1796175107457, SequenceNumber: 3, MasterKeyID: 2}
	b := id.Bytes()
	got, err := ParseIdentifier(b)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *id {
		t.Fatalf("got %+v, want %+v", got, id)
	}
	if !bytes.Equal(got.Bytes(), b) {
		t.Fatal("not written back byte for byte")
	}
	tok := &token.Token{Identifier: b, Kind: Kind, Service: "127.0.0.1:9000"}
	if d, want := Describe(tok), "Kind: HDFS_DELEGATION_TOKEN, Service: 127.0.0.1:9000, Ident: (HDFS_DELEGATION_TOKEN token 3 for alice)"; d != want {
		t.Fatalf("Describe = %q, want %q", d, want)
	}
	for _, bad := range [][]byte{nil, {1}, b[:len(b)-1], append([]byte{0}, 0x8f)} {
		if _, err := ParseIdentifier(bad); err == nil {
			t.Fatalf("ParseIdentifier(%s) accepted", hex.EncodeToString(bad))
		}
	}
}

// FuzzParseIdentifier: identifiers come from clients (an application's credentials).
func FuzzParseIdentifier(f *testing.F) {
	f.Add((&Identifier{Owner: "alice", Renewer: "rm", MaxDate: 1 << 40, SequenceNumber: 7}).Bytes())
	f.Add([]byte{0, 0x8f, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := ParseIdentifier(b)
		if err != nil {
			return
		}
		again, err := ParseIdentifier(id.Bytes())
		if err != nil || *again != *id {
			t.Fatalf("re-encoding %+v: %v %+v", id, err, again)
		}
		_ = Describe(&token.Token{Identifier: b, Kind: Kind})
	})
}
