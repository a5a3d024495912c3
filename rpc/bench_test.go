package rpc

import (
	"context"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"google.golang.org/protobuf/proto"
)

// BenchmarkCallLoopback measures one echo call over a real loopback socket, one caller.
func BenchmarkCallLoopback(b *testing.B) {
	s := NewServer(ServerOptions{Logger: testutil.QuietLogger()})
	s.Register(echoProtocol())
	benchServe(b, s)
	c := NewClient(ClientOptions{Addr: s.Addr().String(), Protocol: testProtocol, User: "bench", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer c.Close()
	req := &echoReq{QueueName: proto.String("q")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var resp echoResp
		if err := c.Call(ctx, "echo", req, &resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallLoopbackParallel measures calls multiplexed on one connection by many
// goroutines, as an AM's allocate and many clients' reports share a server.
func BenchmarkCallLoopbackParallel(b *testing.B) {
	s := NewServer(ServerOptions{Logger: testutil.QuietLogger()})
	s.Register(echoProtocol())
	benchServe(b, s)
	c := NewClient(ClientOptions{Addr: s.Addr().String(), Protocol: testProtocol, User: "bench", ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		req := &echoReq{QueueName: proto.String("q")}
		for pb.Next() {
			var resp echoResp
			if err := c.Call(ctx, "echo", req, &resp); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchServe(b *testing.B, s *Server) {
	ln, err := listenLoopback()
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	for s.Addr() == nil {
		time.Sleep(time.Millisecond)
	}
}
