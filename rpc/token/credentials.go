package token

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/writable"
)

// Credentials is Hadoop's token storage: tokens and secrets by alias. The layout:
//
//	"HDTS" | version byte | body
//	version 0 (WRITABLE): VInt nTokens {Text alias, Token.write}* VInt nSecrets {Text alias, VInt len, bytes}*
//	version 1 (PROTOBUF, Hadoop 3.x): varint-delimited CredentialsProto
//
// Bobbin reads both versions and always writes version 0, which Hadoop 2.x and 3.x read.
type Credentials struct {
	Tokens  map[string]*Token
	Secrets map[string][]byte
}

// NewCredentials returns empty credentials.
func NewCredentials() *Credentials {
	return &Credentials{Tokens: map[string]*Token{}, Secrets: map[string][]byte{}}
}

var credentialsMagic = []byte("HDTS")

// maxCredentialEntries bounds entry counts read from untrusted bytes.
const maxCredentialEntries = 1 << 16

// ErrBadCredentials marks input that is not a Credentials file.
var ErrBadCredentials = errors.New("bad token storage")

// ReadCredentials parses token storage bytes (either version).
func ReadCredentials(data []byte) (*Credentials, error) {
	if len(data) < 5 || !bytes.Equal(data[:4], credentialsMagic) {
		return nil, fmt.Errorf("%w: missing HDTS magic", ErrBadCredentials)
	}
	switch data[4] {
	case 0:
		return readWritableCredentials(data[5:])
	case 1:
		return readProtoCredentials(data[5:])
	default:
		return nil, fmt.Errorf("%w: unknown version %d in token storage", ErrBadCredentials, data[4])
	}
}

// ReadCredentialsFile reads a token storage file such as HADOOP_TOKEN_FILE_LOCATION.
func ReadCredentialsFile(path string) (*Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read token storage: %w", err)
	}
	c, err := ReadCredentials(data)
	if err != nil {
		return nil, fmt.Errorf("token storage %s: %w", path, err)
	}
	return c, nil
}

func readWritableCredentials(body []byte) (*Credentials, error) {
	br := bytes.NewReader(body)
	r := writable.NewReader(br)
	c := NewCredentials()
	n, err := r.VInt()
	if err != nil {
		return nil, fmt.Errorf("%w: token count: %v", ErrBadCredentials, err)
	}
	if n < 0 || n > maxCredentialEntries {
		return nil, fmt.Errorf("%w: token count %d", ErrBadCredentials, n)
	}
	for i := int32(0); i < n; i++ {
		alias, err := r.Text()
		if err != nil {
			return nil, fmt.Errorf("%w: token %d alias: %v", ErrBadCredentials, i, err)
		}
		t, err := ReadWritable(r)
		if err != nil {
			return nil, fmt.Errorf("%w: token %q: %v", ErrBadCredentials, alias, err)
		}
		c.Tokens[alias] = t
	}
	n, err = r.VInt()
	if err != nil {
		return nil, fmt.Errorf("%w: secret count: %v", ErrBadCredentials, err)
	}
	if n < 0 || n > maxCredentialEntries {
		return nil, fmt.Errorf("%w: secret count %d", ErrBadCredentials, n)
	}
	for i := int32(0); i < n; i++ {
		alias, err := r.Text()
		if err != nil {
			return nil, fmt.Errorf("%w: secret %d alias: %v", ErrBadCredentials, i, err)
		}
		v, err := r.Bytes(maxTokenField)
		if err != nil {
			return nil, fmt.Errorf("%w: secret %q: %v", ErrBadCredentials, alias, err)
		}
		c.Secrets[alias] = v
	}
	return c, nil
}

func readProtoCredentials(body []byte) (*Credentials, error) {
	var p commonpb.CredentialsProto
	opts := protodelim.UnmarshalOptions{MaxSize: int64(len(body))}
	if err := opts.UnmarshalFrom(bytes.NewReader(body), &p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %v", ErrBadCredentials, err)
	}
	c := NewCredentials()
	for _, kv := range p.GetTokens() {
		if kv.Token == nil {
			return nil, fmt.Errorf("%w: token %q has no token", ErrBadCredentials, kv.GetAlias())
		}
		c.Tokens[kv.GetAlias()] = FromProto(kv.Token)
	}
	for _, kv := range p.GetSecrets() {
		c.Secrets[kv.GetAlias()] = kv.GetSecret()
	}
	return c, nil
}

// Bytes writes version-0 token storage. Entries are written in alias order so equal
// credentials give equal bytes.
func (c *Credentials) Bytes() []byte {
	b := append([]byte{}, credentialsMagic...)
	b = append(b, 0)
	b = writable.AppendVInt(b, int32(len(c.Tokens)))
	for _, alias := range sortedKeys(c.Tokens) {
		b = writable.AppendText(b, alias)
		b = c.Tokens[alias].AppendWritable(b)
	}
	b = writable.AppendVInt(b, int32(len(c.Secrets)))
	for _, alias := range sortedKeys(c.Secrets) {
		b = writable.AppendText(b, alias)
		b = writable.AppendBytes(b, c.Secrets[alias])
	}
	return b
}

// ProtoBytes writes version-1 token storage (Hadoop 3.x PROTOBUF format). Bobbin never
// sends it to Hadoop; tests use it to exercise the reader.
func (c *Credentials) ProtoBytes() ([]byte, error) {
	p := &commonpb.CredentialsProto{}
	for _, alias := range sortedKeys(c.Tokens) {
		p.Tokens = append(p.Tokens, &commonpb.CredentialsKVProto{Alias: proto.String(alias), Token: c.Tokens[alias].Proto()})
	}
	for _, alias := range sortedKeys(c.Secrets) {
		p.Secrets = append(p.Secrets, &commonpb.CredentialsKVProto{Alias: proto.String(alias), Secret: c.Secrets[alias]})
	}
	var buf bytes.Buffer
	buf.Write(credentialsMagic)
	buf.WriteByte(1)
	if _, err := protodelim.MarshalTo(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ByKind returns the tokens of a kind, in alias order.
func (c *Credentials) ByKind(kind string) []*Token {
	var out []*Token
	for _, alias := range sortedKeys(c.Tokens) {
		if t := c.Tokens[alias]; t.Kind == kind {
			out = append(out, t)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
