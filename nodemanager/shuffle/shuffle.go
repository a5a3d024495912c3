// Package shuffle is the `mapreduce_shuffle` auxiliary service: the HTTP server MapReduce
// reducers fetch map outputs from, speaking Hadoop's ShuffleHandler protocol
// (protocol.md §6). A request names a job, a reduce partition and map attempts; it must
// carry the protocol headers and a UrlHash — HmacSHA1 of "port/path?query" under the job's
// shuffle secret — and is answered with a ReplyHash and, per map, a ShuffleHeader followed
// by that partition's bytes, located through the map's index file.
package shuffle

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/rpc/writable"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// ServiceName is the aux-service id MapReduce uses.
const ServiceName = "mapreduce_shuffle"

// Protocol header values both sides check.
const (
	headerName    = "mapreduce"
	headerVersion = "1.0.0"
)

// Handler serves map outputs. Register jobs with AddJob when their application starts on
// the node and remove them with RemoveJob when it ends.
type Handler struct {
	// LocalDirs are the NodeManager's local dirs; map outputs live under
	// <dir>/usercache/<user>/appcache/<appId>/output/<mapAttempt>/file.out[.index].
	LocalDirs []string
	// Port is the listening port, part of the hashed message.
	Port   int
	Logger *logrus.Entry
	// KeepAlive keeps every connection open after its answer
	// (mapreduce.shuffle.connection-keep-alive.enable), for KeepAliveTimeout
	// (…keep-alive.timeout, 5 s when 0); without it only requests with keepAlive=true
	// keep theirs, as in the Java ShuffleHandler.
	KeepAlive        bool
	KeepAliveTimeout time.Duration
	// BufferSize is the copy buffer of map output (mapreduce.shuffle.transfer.buffer.size;
	// 128 KiB when 0).
	BufferSize int
	// MaxThreads bounds the requests served at once (mapreduce.shuffle.max.threads; the
	// Java handler's worker threads, 2 × CPUs when 0); the others wait their turn.
	MaxThreads int
	// OwnerOf is the user id a job's map outputs must belong to (the user its containers
	// ran as, with LinuxContainerExecutor); nil: any. The outputs are opened through
	// yarn/secureio: the job's containers wrote those dirs, and a link in them must not
	// make the handler serve another file.
	OwnerOf func(user string) int

	mu   sync.RWMutex
	jobs map[string]job // job id -> its user, app and secret

	slotsOnce sync.Once
	slots     chan struct{} // MaxThreads tokens

	bytes, ok, failed, conns atomic.Int64
}

// Stats are the Java ShuffleHandler's ShuffleMetrics: bytes of map output sent, map
// outputs sent and failed, and requests being served now.
type Stats struct {
	OutputBytes, OutputsOK, OutputsFailed, Connections int64
}

// Stats reports the handler's figures since it was built.
func (h *Handler) Stats() Stats {
	return Stats{OutputBytes: h.bytes.Load(), OutputsOK: h.ok.Load(), OutputsFailed: h.failed.Load(), Connections: h.conns.Load()}
}

type job struct {
	user, app string
	secret    []byte
}

// AddJob records a job's user and shuffle secret.
func (h *Handler) AddJob(jobID, appID, user string, secret []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.jobs == nil {
		h.jobs = map[string]job{}
	}
	h.jobs[jobID] = job{user: user, app: appID, secret: append([]byte(nil), secret...)}
}

// RemoveJob forgets a job (its application ended).
func (h *Handler) RemoveJob(jobID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.jobs, jobID)
}

// JobID is the MapReduce job id of an application id ("application_T_N" → "job_T_N").
func JobID(appID string) string { return "job_" + strings.TrimPrefix(appID, "application_") }

// SecretFromServiceData decodes the service data a MapReduce task's launch context carries
// for the shuffle: a Writable Token whose password is the job's shuffle secret.
func SecretFromServiceData(b []byte) ([]byte, error) {
	t, err := token.ReadWritable(writable.NewReader(bytes.NewReader(b)))
	if err != nil {
		return nil, fmt.Errorf("shuffle service data: %w", err)
	}
	return t.Password, nil
}

// Metadata is the 4-byte big-endian port the StartContainers response advertises.
func Metadata(port int) []byte {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, uint32(port))
	return b
}

// hash is base64(HmacSHA1(secret, msg)), SecureShuffleUtils' hash.
func hash(secret []byte, msg string) string {
	m := hmac.New(sha1.New, secret)
	m.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// httpError ends a request with a status and a message, and closes the connection as
// the Java handler does after errors.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

// ServeHTTP answers /mapOutput requests.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.conns.Add(1)
	defer h.conns.Add(-1)
	log := h.Logger
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	if r.Method != http.MethodGet {
		httpError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	h.slotsOnce.Do(func() {
		n := h.MaxThreads
		if n <= 0 {
			n = 2 * runtime.NumCPU()
		}
		h.slots = make(chan struct{}, n)
	})
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	case <-r.Context().Done():
		return
	}
	if r.Header.Get("name") != headerName || r.Header.Get("version") != headerVersion {
		httpError(w, http.StatusBadRequest, "Incompatible shuffle request version")
		return
	}
	q := r.URL.Query()
	jobs, reduces, maps := q["job"], q["reduce"], q["map"]
	if len(jobs) == 0 || len(reduces) == 0 || len(maps) == 0 {
		httpError(w, http.StatusBadRequest, "Required param job, map and reduce")
		return
	}
	if len(jobs) > 1 || len(reduces) > 1 {
		httpError(w, http.StatusBadRequest, "Too many job/reduce parameters")
		return
	}
	reduce, err := strconv.Atoi(reduces[0])
	if err != nil || reduce < 0 {
		httpError(w, http.StatusBadRequest, "Bad reduce parameter")
		return
	}
	var mapIDs []string
	for _, m := range maps {
		for _, id := range strings.Split(m, ",") {
			if id = strings.TrimSpace(id); id != "" {
				mapIDs = append(mapIDs, id)
			}
		}
	}
	h.mu.RLock()
	j, ok := h.jobs[jobs[0]]
	h.mu.RUnlock()
	if !ok {
		httpError(w, http.StatusUnauthorized, "could not find jobid")
		return
	}
	// The message is the server's port and the raw request URI (path?query).
	msg := strconv.Itoa(h.Port) + r.URL.RequestURI()
	urlHash := r.Header.Get("UrlHash")
	if urlHash == "" || !hmac.Equal([]byte(hash(j.secret, msg)), []byte(urlHash)) {
		log.WithFields(logrus.Fields{"job": jobs[0], "uri": r.URL.RequestURI()}).Warn("shuffle request with a wrong UrlHash")
		httpError(w, http.StatusUnauthorized, "Verification of the hashReply failed")
		return
	}
	// Locate every map's partition before answering, so an error is a clean 500.
	type part struct {
		id                      string
		file                    []string // the local dir and the names below it
		offset, rawLen, partLen int64
	}
	parts := make([]part, 0, len(mapIDs))
	var total int64
	owner := h.owner(j) // looked up once a request, not per map output
	for _, id := range mapIDs {
		file, rec, err := h.locate(j, owner, id, reduce)
		if err != nil {
			h.failed.Add(1)
			log.WithError(err).WithFields(logrus.Fields{"job": jobs[0], "map": id, "reduce": reduce}).Warn("shuffle: map output not served")
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
		p := part{id: id, file: file, offset: rec.offset, rawLen: rec.rawLength, partLen: rec.partLength}
		parts = append(parts, p)
		total += int64(len(shuffleHeader(p.id, p.partLen, p.rawLen, reduce))) + p.partLen
	}
	hd := w.Header()
	hd.Set("ReplyHash", hash(j.secret, urlHash))
	hd.Set("name", headerName)
	hd.Set("version", headerVersion)
	if h.KeepAlive || q.Get("keepAlive") == "true" {
		hd.Set("Content-Length", strconv.FormatInt(total, 10))
		hd.Set("Connection", "keep-alive")
		hd.Set("Keep-Alive", fmt.Sprintf("timeout=%d", int(h.keepAliveTimeout()/time.Second)))
	} else {
		hd.Set("Connection", "close")
	}
	w.WriteHeader(http.StatusOK)
	size := h.BufferSize
	if size <= 0 {
		size = 128 << 10
	}
	bw := bufio.NewWriterSize(w, size)
	for _, p := range parts {
		bw.Write(shuffleHeader(p.id, p.partLen, p.rawLen, reduce))
		f, err := secureio.OpenFile(owner, p.file[0], p.file[1:]...)
		if err != nil {
			h.failed.Add(1)
			log.WithError(err).WithFields(logrus.Fields{"job": jobs[0], "map": p.id}).Warn("shuffle: map output not served")
			return // the status is sent: the fetcher sees a short body and retries
		}
		n, err := io.Copy(bw, io.NewSectionReader(f, p.offset, p.partLen))
		f.Close()
		h.bytes.Add(n)
		if err != nil {
			h.failed.Add(1)
			return
		}
	}
	if bw.Flush() == nil {
		h.ok.Add(int64(len(parts)))
		log.WithFields(logrus.Fields{"job": jobs[0], "reduce": reduce, "maps": len(parts), "bytes": total}).Info("map output served")
	}
}

// shuffleHeader is the Writable ShuffleHeader: Text mapId, VLong compressed length,
// VLong uncompressed length, VInt reduce.
func shuffleHeader(mapID string, partLen, rawLen int64, reduce int) []byte {
	b := writable.AppendText(nil, mapID)
	b = writable.AppendVLong(b, partLen)
	b = writable.AppendVLong(b, rawLen)
	return writable.AppendVInt(b, int32(reduce))
}

type indexRecord struct{ offset, rawLength, partLength int64 }

// maxIndexSize bounds an index file read whole: 24 bytes a partition, and a job has at
// most some hundred thousand reducers.
const maxIndexSize = 64 << 20

// owner is the user id j's map outputs must belong to.
func (h *Handler) owner(j job) int {
	if h.OwnerOf == nil {
		return secureio.AnyOwner
	}
	return h.OwnerOf(j.user)
}

// locate finds a map attempt's output file (the local dir and the names below it) and
// reduce's index record under the job's application dirs in every local dir; owner is
// the uid the files must belong to (h.owner).
func (h *Handler) locate(j job, owner int, mapID string, reduce int) ([]string, indexRecord, error) {
	names := []string{"usercache", j.user, "appcache", j.app, "output", mapID}
	rel := filepath.Join(names...)
	if strings.Contains(mapID, "/") || strings.Contains(mapID, "..") {
		return nil, indexRecord{}, fmt.Errorf("bad map id %q", mapID)
	}
	for _, d := range h.LocalDirs {
		f, err := secureio.OpenFile(owner, d, append(names, "file.out.index")...)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, indexRecord{}, err
		}
		idx, err := io.ReadAll(io.LimitReader(f, maxIndexSize))
		f.Close()
		if err != nil {
			return nil, indexRecord{}, err
		}
		rec, err := readIndex(idx, reduce)
		if err != nil {
			return nil, indexRecord{}, fmt.Errorf("%s: %w", filepath.Join(d, rel, "file.out.index"), err)
		}
		// The output is checked now, so a refusal is a clean 500 (and again when served).
		file := append(append([]string{d}, names...), "file.out")
		out, err := secureio.OpenFile(owner, file[0], file[1:]...)
		if err != nil {
			return nil, indexRecord{}, err
		}
		out.Close()
		return file, rec, nil
	}
	return nil, indexRecord{}, fmt.Errorf("Could not find %s/file.out.index in any of the local directories", rel)
}

// readIndex checks an index file's trailing CRC32 and returns partition reduce's record.
func readIndex(b []byte, reduce int) (indexRecord, error) {
	if len(b) < 8 || (len(b)-8)%24 != 0 {
		return indexRecord{}, fmt.Errorf("index file of %d bytes is not n*24+8", len(b))
	}
	body := b[:len(b)-8]
	if want := binary.BigEndian.Uint64(b[len(b)-8:]); uint64(crc32.ChecksumIEEE(body)) != want {
		return indexRecord{}, fmt.Errorf("checksum error in index file")
	}
	n := len(body) / 24
	if reduce >= n {
		return indexRecord{}, fmt.Errorf("reduce %d out of the index's %d partitions", reduce, n)
	}
	e := body[reduce*24:]
	return indexRecord{offset: int64(binary.BigEndian.Uint64(e)), rawLength: int64(binary.BigEndian.Uint64(e[8:])),
		partLength: int64(binary.BigEndian.Uint64(e[16:]))}, nil
}

func (h *Handler) keepAliveTimeout() time.Duration {
	if h.KeepAliveTimeout > 0 {
		return h.KeepAliveTimeout
	}
	return 5 * time.Second
}

// Server is the shuffle's HTTP server.
type Server struct {
	Handler *Handler
	srv     *http.Server
	done    chan struct{}
}

// Listen binds addr (port 0 picks one) and serves in the background until Shutdown.
// maxConns > 0 (mapreduce.shuffle.max.connections) closes connections accepted beyond
// that many open ones, as the Java handler does; the fetcher retries them later.
func Listen(addr string, h *Handler, maxConns int) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("shuffle: bind mapreduce.shuffle.port %s: %w", addr, err)
	}
	h.Port = ln.Addr().(*net.TCPAddr).Port
	if maxConns > 0 {
		ln = &limitListener{Listener: ln, max: int64(maxConns), log: h.Logger}
	}
	mux := http.NewServeMux()
	mux.Handle("/mapOutput", h)
	s := &Server{Handler: h, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: h.keepAliveTimeout()}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// Port is the bound port.
func (s *Server) Port() int { return s.Handler.Port }

// Shutdown stops the server, letting fetches in progress finish until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// limitListener closes connections accepted while max are open.
type limitListener struct {
	net.Listener
	max  int64
	open atomic.Int64
	log  *logrus.Entry
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.open.Add(1); n > l.max {
			l.open.Add(-1)
			c.Close()
			if l.log != nil {
				l.log.WithFields(logrus.Fields{"open": n - 1, "max": l.max}).Info("shuffle connection refused: mapreduce.shuffle.max.connections reached")
			}
			continue
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

type countedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
