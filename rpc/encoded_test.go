package rpc

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
)

// An encoded handler's answer is its bytes, sent as they are.
func TestEncodedResponseIsSentAsItsBytes(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp := &echoResp{}
	if err := c.Call(ctx, "encoded", &echoReq{QueueName: proto.String("q")}, resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.GetQueueInfo().GetQueueName(); got != "from bytes q" {
		t.Fatalf("answer %q, want the handler's bytes", got)
	}
}

// A client can send a request as its bytes and take an answer as its bytes; answers come
// from the server's reused frame buffers, so a second, shorter answer must not carry the
// first one's bytes.
func TestClientSendsAndReceivesEncodedMessages(t *testing.T) {
	s := startServer(t, ServerOptions{})
	c := newTestClient(t, s, ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, q := range []string{strings.Repeat("long queue name ", 100), "q"} {
		b, err := proto.Marshal(&echoReq{QueueName: proto.String(q)})
		if err != nil {
			t.Fatal(err)
		}
		resp := &Encoded{Message: &echoResp{}}
		if err := c.Call(ctx, "echo", &Encoded{Message: &echoReq{}, Bytes: b}, resp); err != nil {
			t.Fatal(err)
		}
		var got echoResp
		if err := proto.Unmarshal(resp.Bytes, &got); err != nil {
			t.Fatal(err)
		}
		if name := got.GetQueueInfo().GetQueueName(); !strings.HasSuffix(name, "/"+q) || strings.Count(name, "long") != strings.Count(q, "long") {
			t.Fatalf("answer %q, want the echo of %q", name, q)
		}
	}
}
