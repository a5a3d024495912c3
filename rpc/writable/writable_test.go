package writable

import (
	"bytes"
	"math"
	"testing"
)

// Encodings computed by hand from WritableUtils.writeVLong.
func TestVLongKnownEncodings(t *testing.T) {
	cases := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}},
		{127, []byte{0x7f}},
		{-112, []byte{0x90}},
		{128, []byte{0x8f, 0x80}},        // -113, one byte
		{255, []byte{0x8f, 0xff}},        //
		{256, []byte{0x8e, 0x01, 0x00}},  // -114, two bytes
		{-113, []byte{0x87, 0x70}},       // -121, ^-113 = 112
		{-257, []byte{0x86, 0x01, 0x00}}, // -122, ^-257 = 256
		{math.MaxInt64, append([]byte{0x88}, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
		{math.MinInt64, append([]byte{0x80}, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
	}
	for _, c := range cases {
		got := AppendVLong(nil, c.v)
		if !bytes.Equal(got, c.want) {
			t.Errorf("AppendVLong(%d) = % x, want % x", c.v, got, c.want)
		}
		back, err := NewReader(bytes.NewReader(got)).VLong()
		if err != nil || back != c.v {
			t.Errorf("VLong(% x) = %d, %v; want %d", got, back, err, c.v)
		}
	}
}

func TestTextRoundTripAndLimits(t *testing.T) {
	b := AppendText(nil, "héllo")
	if b[0] != 6 {
		t.Fatalf("Text length byte = %d, want 6 (UTF-8 bytes)", b[0])
	}
	s, err := NewReader(bytes.NewReader(b)).Text()
	if err != nil || s != "héllo" {
		t.Fatalf("Text = %q, %v", s, err)
	}
	if _, err := NewReader(bytes.NewReader(AppendVInt(nil, 5))).Text(); err == nil {
		t.Fatal("truncated Text accepted")
	}
	if _, err := NewReader(bytes.NewReader(AppendVInt(nil, -1))).Text(); err == nil {
		t.Fatal("negative Text length accepted")
	}
	big := AppendVLong(nil, 1<<40)
	if _, err := NewReader(bytes.NewReader(big)).VInt(); err == nil {
		t.Fatal("VInt accepted a value beyond int32")
	}
	if _, err := NewReader(bytes.NewReader(AppendVInt(nil, 100))).Bytes(10); err == nil {
		t.Fatal("Bytes accepted a length over its limit")
	}
}
