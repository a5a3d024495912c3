package shuffle

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"

	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/rpc/writable"
)

// writeMapOutput lays out a map's output as MapTask does: file.out with one segment per
// reduce, file.out.index with (start, raw, part) big-endian int64s per reduce and the
// CRC32 of those bytes.
func writeMapOutput(t *testing.T, dir string, segments [][]byte) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	var data, idx []byte
	for _, s := range segments {
		idx = binary.BigEndian.AppendUint64(idx, uint64(len(data)))
		idx = binary.BigEndian.AppendUint64(idx, uint64(len(s)+100)) // raw length differs from part length
		idx = binary.BigEndian.AppendUint64(idx, uint64(len(s)))
		data = append(data, s...)
	}
	idx = binary.BigEndian.AppendUint64(idx, uint64(crc32.ChecksumIEEE(idx)))
	os.WriteFile(filepath.Join(dir, "file.out"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "file.out.index"), idx, 0o644)
}

func TestShuffleServesPartitionsByteExact(t *testing.T) {
	local := t.TempDir()
	app, user, secret := "application_1700000000000_0001", "alice", []byte("shuffle-secret")
	base := filepath.Join(local, "usercache", user, "appcache", app, "output")
	m0, m1 := "attempt_1700000000000_0001_m_000000_0", "attempt_1700000000000_0001_m_000001_0"
	writeMapOutput(t, filepath.Join(base, m0), [][]byte{[]byte("r0-of-m0"), []byte("reduce-one-of-map-zero")})
	writeMapOutput(t, filepath.Join(base, m1), [][]byte{[]byte("r0-of-m1"), []byte("r1-m1")})
	h := &Handler{LocalDirs: []string{t.TempDir(), local}}
	srv, err := Listen("127.0.0.1:0", h, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	job := JobID(app)
	// The secret arrives as a Writable Token in the task's service data.
	sd := (&token.Token{Identifier: []byte(job), Password: secret, Kind: "mapreduce.job", Service: job}).AppendWritable(nil)
	got, err := SecretFromServiceData(sd)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("secret %q %v", got, err)
	}
	h.AddJob(job, app, user, got)

	fetch := func(uri, urlHash string, hdr bool) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", srv.Port(), uri), nil)
		if hdr {
			req.Header.Set("name", "mapreduce")
			req.Header.Set("version", "1.0.0")
		}
		if urlHash != "" {
			req.Header.Set("UrlHash", urlHash)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	uri := fmt.Sprintf("/mapOutput?job=%s&reduce=1&map=%s,%s", job, m0, m1)
	good := hash(secret, fmt.Sprintf("%d%s", srv.Port(), uri))
	resp, body := fetch(uri, good, true)
	if resp.StatusCode != 200 || resp.Header.Get("ReplyHash") != hash(secret, good) || resp.Header.Get("name") != "mapreduce" || resp.Header.Get("version") != "1.0.0" {
		t.Fatalf("status %d headers %v body %q", resp.StatusCode, resp.Header, body)
	}
	// Body: per map a ShuffleHeader (Text id, VLong part, VLong raw, VInt reduce) and the bytes.
	r := writable.NewReader(bytes.NewReader(body))
	for _, want := range []struct{ id, data string }{{m0, "reduce-one-of-map-zero"}, {m1, "r1-m1"}} {
		id, _ := r.Text()
		part, _ := r.VLong()
		raw, _ := r.VLong()
		red, _ := r.VInt()
		data := make([]byte, part)
		r.Full(data)
		if id != want.id || string(data) != want.data || raw != part+100 || red != 1 {
			t.Fatalf("got %s %q raw=%d reduce=%d", id, data, raw, red)
		}
	}
	// A wrong hash: 401 and nothing of the data.
	resp, body = fetch(uri, hash([]byte("other"), fmt.Sprintf("%d%s", srv.Port(), uri)), true)
	if resp.StatusCode != 401 || bytes.Contains(body, []byte("reduce-one")) || resp.Header.Get("ReplyHash") != "" {
		t.Fatalf("wrong hash: %d %q", resp.StatusCode, body)
	}
	// The hash covers the query: asking for another reduce with the same hash fails.
	if resp, _ := fetch(fmt.Sprintf("/mapOutput?job=%s&reduce=0&map=%s", job, m0), good, true); resp.StatusCode != 401 {
		t.Fatalf("reused hash: %d", resp.StatusCode)
	}
	if resp, _ := fetch(uri, good, false); resp.StatusCode != 400 {
		t.Fatalf("no version headers: %d", resp.StatusCode)
	}
	if resp, body := fetch("/mapOutput?job="+job, good, true); resp.StatusCode != 400 || string(body) != "Required param job, map and reduce" {
		t.Fatalf("missing params: %d %q", resp.StatusCode, body)
	}
	unknown := fmt.Sprintf("/mapOutput?job=job_1_0009&reduce=0&map=%s", m0)
	if resp, body := fetch(unknown, good, true); resp.StatusCode != 401 || string(body) != "could not find jobid" {
		t.Fatalf("unknown job: %d %q", resp.StatusCode, body)
	}
	missing := fmt.Sprintf("/mapOutput?job=%s&reduce=0&map=attempt_1700000000000_0001_m_000009_0", job)
	if resp, _ := fetch(missing, hash(secret, fmt.Sprintf("%d%s", srv.Port(), missing)), true); resp.StatusCode != 500 {
		t.Fatalf("missing map: %d", resp.StatusCode)
	}
	// A corrupt index is refused.
	idx := filepath.Join(base, m0, "file.out.index")
	b, _ := os.ReadFile(idx)
	b[3] ^= 1
	os.WriteFile(idx, b, 0o644)
	if resp, body := fetch(uri, good, true); resp.StatusCode != 500 || !bytes.Contains(body, []byte("checksum")) {
		t.Fatalf("corrupt index: %d %q", resp.StatusCode, body)
	}
	h.RemoveJob(job)
	if resp, _ := fetch(uri, good, true); resp.StatusCode != 401 {
		t.Fatalf("removed job still served: %d", resp.StatusCode)
	}
}

// A map output the job's containers replaced by a link, or that is not their user's, is
// refused with a 500 naming why, and nothing of the file it points to is sent.
func TestShuffleServesOnlyTheJobsOwnFiles(t *testing.T) {
	local := t.TempDir()
	app, user, secret := "application_1700000000000_0003", "carol", []byte("s")
	base := filepath.Join(local, "usercache", user, "appcache", app, "output")
	linked, index, foreign := "attempt_1700000000000_0003_m_000000_0", "attempt_1700000000000_0003_m_000001_0", "attempt_1700000000000_0003_m_000002_0"
	for _, m := range []string{linked, index, foreign} {
		writeMapOutput(t, filepath.Join(base, m), [][]byte{[]byte("own-map-output")})
	}
	outside := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(outside, []byte("root-only-secret-bytes"), 0o600)
	os.Remove(filepath.Join(base, linked, "file.out"))
	os.Symlink(outside, filepath.Join(base, linked, "file.out"))
	os.Rename(filepath.Join(base, index, "file.out.index"), filepath.Join(base, index, "real.index"))
	os.Symlink(filepath.Join(base, index, "real.index"), filepath.Join(base, index, "file.out.index"))
	var owner atomic.Int64
	owner.Store(int64(os.Geteuid()))
	h := &Handler{LocalDirs: []string{local}, OwnerOf: func(u string) int {
		if u != user {
			t.Errorf("owner asked for %q", u)
		}
		return int(owner.Load())
	}}
	srv, err := Listen("127.0.0.1:0", h, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	h.AddJob(JobID(app), app, user, secret)
	fetch := func(m string) (int, string) {
		uri := fmt.Sprintf("/mapOutput?job=%s&reduce=0&map=%s", JobID(app), m)
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", srv.Port(), uri), nil)
		req.Header.Set("name", "mapreduce")
		req.Header.Set("version", "1.0.0")
		req.Header.Set("UrlHash", hash(secret, fmt.Sprintf("%d%s", srv.Port(), uri)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, m := range []string{linked, index} {
		if code, body := fetch(m); code != 500 || !strings.Contains(body, "symbolic link") || strings.Contains(body, "secret") {
			t.Errorf("%s: %d %q", m, code, body)
		}
	}
	if code, body := fetch(foreign); code != 200 || !strings.Contains(body, "own-map-output") {
		t.Errorf("the job's own output: %d %q", code, body)
	}
	owner.Add(1) // another user's
	if code, body := fetch(foreign); code != 500 || !strings.Contains(body, "owned by uid") {
		t.Errorf("another user's output: %d %q", code, body)
	}
}

// FuzzSecretFromServiceData: the shuffle's service data arrives from AMs over the network.
func FuzzSecretFromServiceData(f *testing.F) {
	f.Add((&token.Token{Identifier: []byte("job_1_0001"), Password: []byte("s"), Kind: "mapreduce.job", Service: "job_1_0001"}).AppendWritable(nil))
	f.Add([]byte{0x8f, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		SecretFromServiceData(b)
	})
}

// FuzzReadIndex: index files are read from disk written by tasks; a corrupt one must be an
// error, never a panic.
func FuzzReadIndex(f *testing.F) {
	f.Add(make([]byte, 32), 0)
	f.Fuzz(func(t *testing.T, b []byte, reduce int) {
		if reduce < 0 {
			reduce = -reduce
		}
		readIndex(b, reduce%64)
	})
}

// mapreduce.shuffle.max.connections closes connections beyond the limit at once (the
// fetcher retries them), and frees a place when one closes; with keep-alive on every
// answer keeps its connection, with the configured timeout.
func TestShuffleConnectionLimitAndKeepAlive(t *testing.T) {
	h := &Handler{LocalDirs: []string{t.TempDir()}, KeepAlive: true, KeepAliveTimeout: 7 * time.Second}
	srv, err := Listen("127.0.0.1:0", h, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	addr := fmt.Sprintf("127.0.0.1:%d", srv.Port())
	first, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// The first stays open and idle; the listener accepts in order, so it is counted
	// before the second.
	second, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(second, "GET /mapOutput HTTP/1.1\r\nHost: x\r\n\r\n")
	if n, err := second.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection over the limit: read %d, %v; want it closed", n, err)
	}
	second.Close()
	first.Close()
	// A place is free again.
	app, user, secret := "application_1700000000000_0002", "bob", []byte("s")
	m0 := "attempt_1700000000000_0002_m_000000_0"
	writeMapOutput(t, filepath.Join(h.LocalDirs[0], "usercache", user, "appcache", app, "output", m0), [][]byte{[]byte("part")})
	h.AddJob(JobID(app), app, user, secret)
	uri := fmt.Sprintf("/mapOutput?job=%s&reduce=0&map=%s", JobID(app), m0)
	var resp *http.Response
	testutil.Eventually(t, 5*time.Second, "no connection accepted after one closed", func() bool {
		req, _ := http.NewRequest("GET", "http://"+addr+uri, nil)
		req.Header.Set("name", "mapreduce")
		req.Header.Set("version", "1.0.0")
		req.Header.Set("UrlHash", hash(secret, fmt.Sprintf("%d%s", srv.Port(), uri)))
		r, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			return false
		}
		io.ReadAll(r.Body)
		r.Body.Close()
		resp = r
		return true
	})
	if resp.StatusCode != 200 || resp.Header.Get("Connection") != "keep-alive" || resp.Header.Get("Keep-Alive") != "timeout=7" {
		t.Fatalf("answer %d %v; want 200 with keep-alive, timeout=7", resp.StatusCode, resp.Header)
	}
}
