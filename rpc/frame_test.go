package rpc

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

const acpName = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"

var captureUUID = bytes.Repeat([]byte{0xab}, 16)

// captureBytes rebuilds the annotated capture of protocol.md §8.1 (Hadoop 2.7.3
// `yarn application -list`, no token) byte by byte from the fact sheet.
func captureBytes() []byte {
	h := func(s string) []byte { b, _ := hex.DecodeString(strings.ReplaceAll(s, " ", "")); return b }
	var b []byte
	b = append(b, h("68 72 70 63 09 00 00")...)
	// Connection context packet, length 92.
	b = append(b, h("00 00 00 5c 1a 08 02 10 00 18 05 22 10")...)
	b = append(b, captureUUID...)
	b = append(b, h("28 01 40 12 06 0a 04")...)
	b = append(b, "root"...)
	b = append(b, 0x1a, 0x36)
	b = append(b, acpName...)
	// getApplications call, length 110.
	b = append(b, h("00 00 00 6e 1a 08 02 10 00 18 00 22 10")...)
	b = append(b, captureUUID...)
	b = append(b, h("28 00 4b 0a 0f")...)
	b = append(b, "getApplications"...)
	b = append(b, 0x12, 0x36)
	b = append(b, acpName...)
	b = append(b, h("18 01 06 10 03 10 04 10 05")...)
	return b
}

func TestDecodeAnnotatedCapture(t *testing.T) {
	r := bytes.NewReader(captureBytes())
	p, err := ReadPreamble(r)
	if err != nil || p != (Preamble{Version: 9, ServiceClass: 0, Auth: AuthNone}) {
		t.Fatalf("preamble %+v %v", p, err)
	}
	pkt, err := ReadFrame(r, DefaultMaxDataLength)
	if err != nil || len(pkt) != 92 {
		t.Fatalf("context frame: %d bytes, %v", len(pkt), err)
	}
	req, err := DecodeRequest(pkt)
	if err != nil {
		t.Fatal(err)
	}
	h := req.Header
	if h.GetRpcKind() != commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER || h.GetCallId() != CallIDConnectionContext || h.GetRetryCount() != -1 || !bytes.Equal(h.GetClientId(), captureUUID) {
		t.Fatalf("context header %v", h)
	}
	cc := &commonpb.IpcConnectionContextProto{}
	if rest, err := ReadDelimited(req.Payload, cc); err != nil || len(rest) != 0 {
		t.Fatalf("context: %v, %d left", err, len(rest))
	}
	if cc.GetUserInfo().GetEffectiveUser() != "root" || cc.GetProtocol() != acpName {
		t.Fatalf("context %v", cc)
	}

	pkt, err = ReadFrame(r, DefaultMaxDataLength)
	if err != nil || len(pkt) != 110 {
		t.Fatalf("call frame: %d bytes, %v", len(pkt), err)
	}
	req, err = DecodeRequest(pkt)
	if err != nil || req.Header.GetCallId() != 0 || req.Header.GetRetryCount() != 0 {
		t.Fatalf("call header %v %v", req.Header, err)
	}
	rh := &commonpb.RequestHeaderProto{}
	body, err := ReadDelimited(req.Payload, rh)
	if err != nil || rh.GetMethodName() != "getApplications" || rh.GetDeclaringClassProtocolName() != acpName || rh.GetClientProtocolVersion() != 1 {
		t.Fatalf("request header %v %v", rh, err)
	}
	ga := &yarnpb.GetApplicationsRequestProto{}
	if rest, err := ReadDelimited(body, ga); err != nil || len(rest) != 0 {
		t.Fatalf("body: %v", err)
	}
	want := []yarnpb.YarnApplicationStateProto{yarnpb.YarnApplicationStateProto_SUBMITTED, yarnpb.YarnApplicationStateProto_ACCEPTED, yarnpb.YarnApplicationStateProto_RUNNING}
	if len(ga.ApplicationStates) != 3 || ga.ApplicationStates[0] != want[0] || ga.ApplicationStates[1] != want[1] || ga.ApplicationStates[2] != want[2] {
		t.Fatalf("states %v", ga.ApplicationStates)
	}
	if r.Len() != 0 {
		t.Fatalf("%d bytes left over", r.Len())
	}
}

// The client must put exactly these bytes on the wire for the same content.
func TestEncodeMatchesCapture(t *testing.T) {
	c := NewClient(ClientOptions{Addr: "x:1", Protocol: acpName, User: "root"})
	c.clientID = captureUUID
	out := Preamble{Version: 9}.Bytes()
	cc := &commonpb.IpcConnectionContextProto{UserInfo: &commonpb.UserInformationProto{EffectiveUser: proto.String("root")}, Protocol: proto.String(acpName)}
	out, _ = AppendFrame(out, c.header(CallIDConnectionContext, -1), cc)
	rh := &commonpb.RequestHeaderProto{MethodName: proto.String("getApplications"), DeclaringClassProtocolName: proto.String(acpName), ClientProtocolVersion: proto.Uint64(1)}
	ga := &yarnpb.GetApplicationsRequestProto{ApplicationStates: []yarnpb.YarnApplicationStateProto{3, 4, 5}}
	out, _ = AppendFrame(out, c.header(0, 0), rh, ga)
	if want := captureBytes(); !bytes.Equal(out, want) {
		t.Fatalf("encoded\n%x\nwant\n%x", out, want)
	}
}

// Negative call ids go out as the uint32 bit pattern: -33 is DF FF FF FF 0F.
func TestNegativeCallIDEncoding(t *testing.T) {
	h := &commonpb.RpcResponseHeaderProto{CallId: wireCallID(CallIDSASL), Status: commonpb.RpcResponseHeaderProto_SUCCESS.Enum()}
	b, _ := proto.Marshal(h)
	if !bytes.HasPrefix(b, []byte{0x08, 0xdf, 0xff, 0xff, 0xff, 0x0f}) {
		t.Fatalf("% x", b)
	}
}

func TestReadFrameLimits(t *testing.T) {
	if _, err := ReadFrame(bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff}), DefaultMaxDataLength); err == nil {
		t.Fatal("2 GB frame accepted")
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff}), DefaultMaxDataLength); err == nil {
		t.Fatal("negative frame accepted")
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0, 0, 0, 5, 1}), DefaultMaxDataLength); err == nil {
		t.Fatal("short frame accepted")
	}
	if _, err := ReadDelimited([]byte{0x05, 1, 2}, &commonpb.RpcSaslProto{}); err == nil {
		t.Fatal("delimited length beyond the buffer accepted")
	}
	// A required field missing (RpcSaslProto.state) is an error, as in Java.
	if _, err := ReadDelimited([]byte{0x00}, &commonpb.RpcSaslProto{}); err == nil {
		t.Fatal("message without its required field accepted")
	}
}

func TestDecodeResponseRejectsBodyAfterError(t *testing.T) {
	h := &commonpb.RpcResponseHeaderProto{CallId: proto.Uint32(1), Status: commonpb.RpcResponseHeaderProto_ERROR.Enum()}
	pkt, _ := AppendFrame(nil, h, &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum()})
	if _, _, err := DecodeResponse(pkt[4:]); err == nil {
		t.Fatal("body after an error header accepted")
	}
}

// FuzzDecodeRequest covers the frame and header decoders the server runs on every packet.
func FuzzDecodeRequest(f *testing.F) {
	capture := captureBytes()
	f.Add(capture[7:])
	f.Add([]byte{0, 0, 0, 2, 0, 0})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			pkt, err := ReadFrame(r, 1<<16)
			if err != nil {
				return
			}
			req, err := DecodeRequest(pkt)
			if err != nil {
				continue
			}
			if req.Header.CallId == nil || req.Header.ClientId == nil {
				t.Fatal("decoded a header without its required fields")
			}
			rh := &commonpb.RequestHeaderProto{}
			ReadDelimited(req.Payload, rh)
			ReadDelimited(req.Payload, &commonpb.IpcConnectionContextProto{})
			ReadDelimited(req.Payload, &commonpb.RpcSaslProto{})
		}
	})
}
