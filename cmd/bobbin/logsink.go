package main

import (
	"errors"

	"github.com/bobbin-yarn/bobbin/internal/logfile"

	"bufio"
	"bytes"
	"io"
	"sync"
	"time"
)

// logSink buffers a daemon's log output. A busy ResourceManager logs tens of thousands
// of lines a second (one per container allocated and per container completed); a write
// per line cost it a tenth of its CPU. Lines wait at most flushEvery, warnings and errors
// go out at once, and Close writes what is left.
type logSink struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
	// file is the rolling log file under the buffer (nil: standard error).
	file *logfile.Writer
}

// LogDir is the directory of the daemon's log files ("" when it logs to standard
// error): the daemons' /logs/ page lists it.
func (s *logSink) LogDir() string {
	if s.file == nil {
		return ""
	}
	return s.file.LogDir()
}

const flushEvery = 50 * time.Millisecond

func newLogSink(w io.Writer) *logSink {
	s := &logSink{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go s.flushLoop()
	return s
}

func (s *logSink) flushLoop() {
	defer close(s.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			s.w.Flush()
			s.mu.Unlock()
		}
	}
}

// urgent reports whether a formatted line is a warning or worse (logrus text and JSON
// formats both name the level near the start of the line).
func urgent(p []byte) bool {
	head := p[:min(len(p), 96)]
	i := bytes.Index(head, []byte("level="))
	if i < 0 {
		i = bytes.Index(head, []byte(`"level":"`))
		if i < 0 {
			return false
		}
		i += len(`"level":"`)
	} else {
		i += len("level=")
	}
	if i >= len(head) {
		return false
	}
	switch head[i] {
	case 'w', 'e', 'f', 'p':
		return true
	}
	return false
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.w.Write(p)
	if err == nil && urgent(p) {
		err = s.w.Flush()
	}
	return n, err
}

// Close stops the flusher and writes out what is buffered.
func (s *logSink) Close() error {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.w.Flush()
	if s.file != nil {
		err = errors.Join(err, s.file.Close())
	}
	return err
}
