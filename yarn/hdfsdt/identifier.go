// Package hdfsdt handles HDFS delegation tokens (kind HDFS_DELEGATION_TOKEN) as the
// ResourceManager needs them: it decodes their identifier and asks a NameNode to get, renew
// and cancel them over ClientNamenodeProtocol, as Java's DFSClient.Renewer does when the
// Java RM's DelegationTokenRenewer keeps an application's tokens alive.
package hdfsdt

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/rpc/writable"
)

// Kind is the token kind the NameNode issues.
const Kind = "HDFS_DELEGATION_TOKEN"

// Identifier is an HDFS DelegationTokenIdentifier (Hadoop's
// AbstractDelegationTokenIdentifier in its Writable form).
type Identifier struct {
	Owner, Renewer, RealUser string
	IssueDate, MaxDate       int64 // ms since the epoch
	SequenceNumber           int32
	MasterKeyID              int32
}

// identifierVersion is AbstractDelegationTokenIdentifier.VERSION.
const identifierVersion = 0

// ParseIdentifier decodes a token's identifier bytes (they come from clients: a token in
// an application's credentials), refusing what Java's readFields would.
func ParseIdentifier(b []byte) (*Identifier, error) {
	r := writable.NewReader(bytes.NewReader(b))
	v, err := r.Byte()
	if err != nil {
		return nil, fmt.Errorf("hdfs delegation token identifier: %w", err)
	}
	if v != identifierVersion {
		return nil, fmt.Errorf("hdfs delegation token identifier: unknown version of delegation token %d", v)
	}
	id := &Identifier{}
	for _, f := range []*string{&id.Owner, &id.Renewer, &id.RealUser} {
		if *f, err = r.Text(); err != nil {
			return nil, fmt.Errorf("hdfs delegation token identifier: %w", err)
		}
	}
	if id.IssueDate, err = r.VLong(); err == nil {
		if id.MaxDate, err = r.VLong(); err == nil {
			if id.SequenceNumber, err = r.VInt(); err == nil {
				id.MasterKeyID, err = r.VInt()
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("hdfs delegation token identifier: %w", err)
	}
	return id, nil
}

// Bytes is the identifier in its Writable form.
func (id *Identifier) Bytes() []byte {
	b := []byte{identifierVersion}
	for _, s := range []string{id.Owner, id.Renewer, id.RealUser} {
		b = writable.AppendText(b, s)
	}
	b = writable.AppendVLong(b, id.IssueDate)
	b = writable.AppendVLong(b, id.MaxDate)
	b = writable.AppendVInt(b, id.SequenceNumber)
	return writable.AppendVInt(b, id.MasterKeyID)
}

// String is Java's DelegationTokenIdentifier.toString: the kind, the sequence number and
// the owner's short name.
func (id *Identifier) String() string {
	return fmt.Sprintf("%s token %d for %s", Kind, id.SequenceNumber, shortName(id.Owner))
}

// shortName is a principal's first component (alice/host@REALM → alice), what Hadoop's
// DEFAULT auth_to_local rule gives for the default realm.
func shortName(p string) string {
	if i := strings.IndexAny(p, "/@"); i >= 0 {
		return p[:i]
	}
	return p
}

// Describe is Java's Token.toString for a token of any kind, with an HDFS identifier
// decoded as Java decodes it ("Kind: HDFS_DELEGATION_TOKEN, Service: 127.0.0.1:9000,
// Ident: (HDFS_DELEGATION_TOKEN token 3 for alice)"): the text the Java RM puts in a
// rejected application's diagnostics.
func Describe(t *token.Token) string {
	ident := fmt.Sprintf("%x", t.Identifier)
	if t.Kind == Kind {
		if id, err := ParseIdentifier(t.Identifier); err == nil {
			ident = "(" + id.String() + ")"
		}
	}
	return fmt.Sprintf("Kind: %s, Service: %s, Ident: %s", t.Kind, t.Service, ident)
}
