package aggregatedlog

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func fileOf(data []byte) LogFile {
	return LogFile{Length: int64(len(data)), Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
}

// The writer reproduces, byte for byte, a file the Apache 2.7.3 NodeManager aggregated
// (a distributed shell: its AM and one container), from the records Parse finds in it.
func TestWriterMatchesApacheNodeManager(t *testing.T) {
	want, err := os.ReadFile("testdata/apache-2.7.3-dshell.tfile")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 1 || f.Owner != "root" || len(f.Containers) != 2 || f.Containers[0].Logs[1].Type != "stdout" {
		t.Fatalf("parsed %+v", f)
	}
	var got bytes.Buffer
	w, err := NewWriter(&got, f.Owner, f.ACLs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Containers {
		var files []LogFile
		for _, l := range c.Logs {
			lf := fileOf(l.Data)
			lf.Name = l.Type
			files = append(files, lf)
		}
		if err := w.Append(c.ID, files); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("written %d bytes, Apache's %d:\n%x\n%x", got.Len(), len(want), got.Bytes(), want)
	}
}

// Large logs span data blocks and value chunks; the round trip keeps every byte.
func TestRoundTripAcrossBlocksAndChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 3*chunkSize+12345)
	for i := range big {
		big[i] = byte(rng.IntN(256))
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "alice", []ACL{{"VIEW_APP", "alice bob"}, {"MODIFY_APP", "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"container_1_0001_01_000001", "container_1_0001_01_000002", "container_1_0001_01_000003"}
	for i, id := range ids {
		logs := []LogFile{{Name: "stderr"}, {Name: "stdout"}}
		logs[0].Length, logs[0].Open = fileOf(big[:i*400000]).Length, fileOf(big[:i*400000]).Open
		logs[1].Length, logs[1].Open = fileOf([]byte("ünïcode\n")).Length, fileOf([]byte("ünïcode\n")).Open
		if err := w.Append(id, logs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Append("container_1_0001_01_000004", []LogFile{{Name: "syslog", Length: int64(len(big)), Open: fileOf(big).Open}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Owner != "alice" || len(f.ACLs) != 2 || f.ACLs[0].ACL != "alice bob" || len(f.Containers) != 4 {
		t.Fatalf("parsed %+v", f)
	}
	for i, id := range ids {
		c := f.Containers[i]
		if c.ID != id || !bytes.Equal(c.Logs[0].Data, big[:i*400000]) || string(c.Logs[1].Data) != "ünïcode\n" {
			t.Fatalf("container %d: %s, %d bytes", i, c.ID, len(c.Logs[0].Data))
		}
	}
	if !bytes.Equal(f.Containers[3].Logs[0].Data, big) {
		t.Fatal("the large log came back different")
	}
}

// A file that changed length while it was copied keeps the length its header states.
func TestLengthIsKept(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, "u", nil)
	grown := LogFile{Name: "stdout", Length: 3, Open: fileOf([]byte("abcdef")).Open}
	shrunk := LogFile{Name: "stderr", Length: 5, Open: fileOf([]byte("xy")).Open}
	if err := w.Append("c", []LogFile{grown, shrunk}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, err := Parse(buf.Bytes())
	if err != nil || string(f.Containers[0].Logs[0].Data) != "abc" || len(f.Containers[0].Logs[1].Data) != 5 {
		t.Fatalf("%+v %v", f, err)
	}
}

func TestVLongRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 127, 128, -32, -33, 255, 351, 4095, 1 << 20, -(1 << 20), 1<<31 - 1, -(1 << 31), 1 << 40, -(1 << 40), 1<<63 - 1, -(1 << 63)} {
		b := appendVLong(nil, n)
		got, k, err := readVLong(b)
		if err != nil || got != n || k != len(b) {
			t.Fatalf("%d: encoded %x, read %d (%d bytes) %v", n, b, got, k, err)
		}
	}
	if strings.Contains(string(utf("a\x00b")), "\x00b") {
		t.Fatal("NUL not in modified UTF-8")
	}
}

// FuzzParse: any bytes give a File or an error, never a panic or a runaway allocation.
func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile("testdata/apache-2.7.3-dshell.tfile")
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		Parse(b)
	})
}
