package rmcore

import (
	"strconv"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
)

// The log values listing containers. A busy RM writes a line per heartbeat's completed
// containers and per application's allocations in each pass, dozens of ids each: these
// write themselves into the line (encoding.TextAppender, see internal/logfmt) instead of
// being built as strings first. String gives the same text to any other formatter.

// allocatedLog lists allocated containers as "id@host:port id@host:port ...".
type allocatedLog []*rmstate.Container

func (l allocatedLog) AppendText(b []byte) ([]byte, error) {
	for i, c := range l {
		if i > 0 {
			b = append(b, ' ')
		}
		b = c.ID.AppendString(b)
		b = append(b, '@')
		b = append(b, c.Node()...)
	}
	return b, nil
}

func (l allocatedLog) String() string {
	b, _ := l.AppendText(nil)
	return string(b)
}

// completedLog lists completed containers as "id:exit_status id:exit_status ...".
type completedLog []rmstate.Completion

func (l completedLog) AppendText(b []byte) ([]byte, error) {
	for i, f := range l {
		if i > 0 {
			b = append(b, ' ')
		}
		b = f.C.ID.AppendString(b)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(f.Exit()), 10)
	}
	return b, nil
}

func (l completedLog) String() string {
	b, _ := l.AppendText(nil)
	return string(b)
}
