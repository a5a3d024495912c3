package logfmt

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

const layout = "2006-01-02T15:04:05.000Z07:00"

// ids writes itself into a line, and says the same as a Stringer for logrus's formatter.
type ids []int

func (x ids) AppendText(b []byte) ([]byte, error) {
	for i, id := range x {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, "container_"...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, "@host:"...)
		b = strconv.AppendInt(b, int64(8041+i), 10)
	}
	return b, nil
}

func (x ids) String() string {
	b, _ := x.AppendText(nil)
	return string(b)
}

type nilStringer struct{ s string }

func (n *nilStringer) String() string { return n.s }

// Every line is what logrus.TextFormatter (full timestamps, no colors) writes for it.
func TestLinesAreLogrusLines(t *testing.T) {
	at := time.Date(2026, 11, 27, 21, 11, 12, 913_000_000, time.UTC)
	var nilS *nilStringer
	cases := []struct {
		msg    string
		level  logrus.Level
		fields logrus.Fields
	}{
		{"containers allocated", logrus.InfoLevel, logrus.Fields{"application": "application_1_0001", "containers": ids{1, 2, 3}, "memory_mb": int64(1024), "vcores": int32(1)}},
		{"NodeManager registered", logrus.InfoLevel, logrus.Fields{"node": "127.0.0.1:20000", "http_port": 8042, "ok": true, "load": 0.25, "n": uint(7)}},
		{"", logrus.WarnLevel, logrus.Fields{"empty": "", "spaces": "a b", "quote": `say "hi"`, "slash": `C:\dir`, "tab": "a\tb", "utf": "héllo wörld", "ctl": "\x01"}},
		{"clash", logrus.ErrorLevel, logrus.Fields{"time": "mine", "msg": "mine too", "level": 3, "logrus_error": "x", "zeta": 1}},
		{"errors and stringers", logrus.DebugLevel, logrus.Fields{"error": errors.New("open /x: no such file"), "s": &nilStringer{"fine"}, "nil": nilS, "bytes": []byte("a=b"), "f32": float32(1.5)}},
		{"many fields", logrus.InfoLevel, logrus.Fields{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9, "j": 10}},
		{"safe-chars_only/@^+.", logrus.InfoLevel, logrus.Fields{"v": "abcXYZ019-._/@^+", "big": ids{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}}},
		{"line\nbreak", logrus.TraceLevel, nil},
	}
	for _, c := range cases {
		line := func(f logrus.Formatter) string {
			l := logrus.New()
			var out bytes.Buffer
			l.SetOutput(&out)
			l.SetFormatter(f)
			l.SetLevel(logrus.TraceLevel)
			l.WithTime(at).WithFields(c.fields).Log(c.level, c.msg)
			return out.String()
		}
		want := line(&logrus.TextFormatter{FullTimestamp: true, DisableColors: true, TimestampFormat: layout})
		got := line(&Formatter{TimestampFormat: layout})
		if got != want {
			t.Errorf("%q:\n got %s\nwant %s", c.msg, got, want)
		}
	}
}

// The default layout is logrus's (RFC 3339).
func TestDefaultLayout(t *testing.T) {
	e := logrus.NewEntry(logrus.New())
	e.Time, e.Message, e.Level = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "m", logrus.InfoLevel
	b, err := (&Formatter{}).Format(e)
	if err != nil {
		t.Fatal(err)
	}
	if want := `time="2026-01-02T03:04:05Z" level=info msg=m` + "\n"; string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
}

// A value longer than the buffer's spare room is quoted right too.
func TestLongAppender(t *testing.T) {
	long := make(ids, 2000)
	for i := range long {
		long[i] = i
	}
	l := logrus.New()
	var out bytes.Buffer
	l.SetOutput(&out)
	l.SetFormatter(&Formatter{TimestampFormat: layout})
	l.WithField("containers", long).Info("x")
	if want := `containers="` + long.String() + `"`; !strings.Contains(out.String(), want) {
		t.Fatalf("line %.200q... lacks the quoted list", out.String())
	}
}

func BenchmarkContainerLine(b *testing.B) {
	list := make(ids, 60)
	for i := range list {
		list[i] = 100000 + i
	}
	for _, f := range []struct {
		name string
		f    logrus.Formatter
		v    any
	}{
		{"logrus", &logrus.TextFormatter{FullTimestamp: true, DisableColors: true, TimestampFormat: layout}, list.String()},
		{"logfmt", &Formatter{TimestampFormat: layout}, list},
	} {
		b.Run(f.name, func(b *testing.B) {
			l := logrus.New()
			l.SetOutput(bytes.NewBuffer(nil))
			l.SetFormatter(f.f)
			var out bytes.Buffer
			l.SetOutput(&out)
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				v := f.v
				if s, ok := v.(fmt.Stringer); ok && f.name == "logrus" {
					v = s.String() // logrus gets the string built, as callers built it
				}
				l.WithFields(logrus.Fields{"application": "application_1_0001", "containers": v}).Info("containers allocated")
			}
		})
	}
}
