// Package logfile is a daemon's log file with log4j's RollingFileAppender's rotation:
// past its maximum size the file becomes name.1, name.1 becomes name.2 and so on, the
// oldest beyond the backup count deleted (hadoop.log.maxfilesize, hadoop.log.maxbackupindex).
package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Writer appends to the log file and rotates it. Its lock is a leaf.
type Writer struct {
	dir, path string
	max       int64 // bytes; <= 0: never rotate
	backups   int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (appending) name in dir, creating dir.
func Open(dir, name string, max int64, backups int) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("log directory %s: %w", dir, err)
	}
	w := &Writer{dir: dir, path: filepath.Join(dir, name), max: max, backups: backups}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log file: %w", err)
	}
	w.f, w.size = f, st.Size()
	return nil
}

// LogDir is the directory the log files are in (the daemons' /logs/ lists it).
func (w *Writer) LogDir() string { return w.dir }

// Path is the current log file.
func (w *Writer) Path() string { return w.path }

// Write appends p, rotating first when p would take the file past its maximum.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, os.ErrClosed
	}
	if w.max > 0 && w.size > 0 && w.size+int64(len(p)) > w.max {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

// rotate shifts the backups up by one (dropping the oldest) and starts a new file.
func (w *Writer) rotate() error {
	if err := w.f.Close(); err != nil {
		return err
	}
	w.f = nil
	if w.backups > 0 {
		os.Remove(w.path + "." + strconv.Itoa(w.backups))
		for i := w.backups - 1; i >= 1; i-- {
			os.Rename(w.path+"."+strconv.Itoa(i), w.path+"."+strconv.Itoa(i+1))
		}
		if err := os.Rename(w.path, w.path+".1"); err != nil {
			return fmt.Errorf("rotate the log file: %w", err)
		}
	} else if err := os.Truncate(w.path, 0); err != nil {
		return fmt.Errorf("rotate the log file: %w", err)
	}
	return w.open()
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
