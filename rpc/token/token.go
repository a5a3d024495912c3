// Package token holds Hadoop security tokens in both their forms (protobuf TokenProto and
// the Writable Token.write form), the Credentials container ("HDTS" token storage) and
// the HmacSHA1 password rule every Hadoop secret manager uses. See protocol.md §2.3, §3.
package token

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"hash"
	"sync"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/writable"
)

// Kinds of tokens Bobbin issues or recognises.
const (
	KindAMRM      = "YARN_AM_RM_TOKEN"
	KindNM        = "NMToken"
	KindContainer = "ContainerToken"
	KindJob       = "mapreduce.job"
)

// Token is a Hadoop security token.
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// Password computes SecretManager.createPassword: HmacSHA1(key, identifier).
func Password(key, identifier []byte) []byte {
	m := hmac.New(sha1.New, key)
	m.Write(identifier)
	return m.Sum(nil)
}

// Signer computes Password for one key, reusing its HMAC states: an RM signs a container
// token per allocation, thousands a second, and a fresh HMAC costs four allocations and
// two key schedules.
type Signer struct {
	key  []byte
	pool sync.Pool
}

// NewSigner returns a Signer for key (which it keeps; the caller must not change it).
func NewSigner(key []byte) *Signer {
	s := &Signer{key: key}
	s.pool.New = func() any { return hmac.New(sha1.New, s.key) }
	return s
}

// Password is Password(key, identifier).
func (s *Signer) Password(identifier []byte) []byte {
	m := s.pool.Get().(hash.Hash)
	m.Reset()
	m.Write(identifier)
	out := m.Sum(make([]byte, 0, sha1.Size))
	s.pool.Put(m)
	return out
}

// FromProto converts a TokenProto; nil gives nil.
func FromProto(p *commonpb.TokenProto) *Token {
	if p == nil {
		return nil
	}
	return &Token{Identifier: p.GetIdentifier(), Password: p.GetPassword(), Kind: p.GetKind(), Service: p.GetService()}
}

// Proto converts t to a TokenProto. All four fields are required on the wire, so empty
// strings are sent explicitly.
func (t *Token) Proto() *commonpb.TokenProto {
	return &commonpb.TokenProto{
		Identifier: nonNil(t.Identifier),
		Password:   nonNil(t.Password),
		Kind:       &t.Kind,
		Service:    &t.Service,
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// AppendWritable appends Token.write: VInt len, identifier, VInt len, password, Text kind,
// Text service.
func (t *Token) AppendWritable(b []byte) []byte {
	b = writable.AppendBytes(b, t.Identifier)
	b = writable.AppendBytes(b, t.Password)
	b = writable.AppendText(b, t.Kind)
	return writable.AppendText(b, t.Service)
}

// maxTokenField bounds identifier and password lengths read from untrusted bytes.
const maxTokenField = 1 << 20

// ReadWritable reads a Token in its Writable form.
func ReadWritable(r *writable.Reader) (*Token, error) {
	var t Token
	var err error
	if t.Identifier, err = r.Bytes(maxTokenField); err != nil {
		return nil, fmt.Errorf("token identifier: %w", err)
	}
	if t.Password, err = r.Bytes(maxTokenField); err != nil {
		return nil, fmt.Errorf("token password: %w", err)
	}
	if t.Kind, err = r.Text(); err != nil {
		return nil, fmt.Errorf("token kind: %w", err)
	}
	if t.Service, err = r.Text(); err != nil {
		return nil, fmt.Errorf("token service: %w", err)
	}
	return &t, nil
}

// SASLUsername is the DIGEST-MD5 user name for this token: base64 of the identifier.
func (t *Token) SASLUsername() string { return base64.StdEncoding.EncodeToString(t.Identifier) }

// SASLPassword is the DIGEST-MD5 password: base64 of the token password, used as text.
func (t *Token) SASLPassword() string { return base64.StdEncoding.EncodeToString(t.Password) }

func (t *Token) String() string {
	return fmt.Sprintf("Kind: %s, Service: %s, Ident: %x", t.Kind, t.Service, t.Identifier)
}
