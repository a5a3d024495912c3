// Package logfmt is the daemons' log line format: what logrus.TextFormatter writes with
// a full timestamp and no colors, written with less work, and field values that write
// themselves into the line.
//
// A busy RM logs a line for every heartbeat's completed containers and for every
// application's allocations in every scheduling pass: at 100,000 containers a second
// those lines (each listing dozens of container ids) cost a tenth of its CPU under
// logrus.TextFormatter, most of it in quoting them rune by rune and in the strings built
// to hold them. The Formatter quotes printable ASCII by copying it, and a value that
// implements encoding.TextAppender (a list of containers) is appended straight into the
// line.
package logfmt

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
)

// Formatter writes an entry as logrus.TextFormatter{FullTimestamp: true, DisableColors:
// true, TimestampFormat: TimestampFormat} does: time, level and msg, then the fields
// sorted by key, values quoted when they hold anything but letters, digits and
// -._/@^+. It never colors (logrus colors a terminal's lines) and, as the daemons never
// report callers nor log values logrus refuses (functions), it writes neither func,
// file nor logrus_error.
type Formatter struct {
	TimestampFormat string // time.Format layout; empty: RFC 3339
}

var _ logrus.Formatter = (*Formatter)(nil)

// Format writes one line.
func (f *Formatter) Format(e *logrus.Entry) ([]byte, error) {
	b := e.Buffer
	if b == nil {
		b = new(bytes.Buffer)
	}
	layout := f.TimestampFormat
	if layout == "" {
		layout = "2006-01-02T15:04:05Z07:00" // logrus's default, time.RFC3339
	}
	b.WriteString("time=")
	appendQuoted(b, e.Time.AppendFormat(b.AvailableBuffer(), layout))
	b.WriteString(" level=")
	b.WriteString(e.Level.String())
	if e.Message != "" {
		b.WriteString(" msg=")
		appendString(b, e.Message)
	}
	// Keys clashing with the line's own are written as logrus writes them, "fields.<key>".
	type field struct {
		key string
		v   any
	}
	var small [8]field
	fields := small[:0]
	for k, v := range e.Data {
		switch k {
		case logrus.FieldKeyTime, logrus.FieldKeyMsg, logrus.FieldKeyLevel, logrus.FieldKeyLogrusError:
			k = "fields." + k
		}
		fields = append(fields, field{k, v})
	}
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
	for _, f := range fields {
		b.WriteByte(' ')
		b.WriteString(f.key)
		b.WriteByte('=')
		appendValue(b, f.v)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// appendValue writes v as logrus.TextFormatter's appendValue does; an
// encoding.TextAppender writes itself.
func appendValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case string:
		appendString(b, v)
	case encoding.TextAppender:
		text, err := safeAppend(v, b.AvailableBuffer())
		if err != nil {
			appendString(b, fmt.Sprintf("%%!v(ERROR=%v)", err))
			return
		}
		appendQuoted(b, text)
	case []byte:
		appendQuoted(b, v)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case error:
		appendString(b, safeString(v, "Error", v.Error))
	case fmt.Stringer:
		appendString(b, safeString(v, "String", v.String))
	case int, int8, int16, int32, int64:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), reflect.ValueOf(v).Int(), 10))
	case uint, uint8, uint16, uint32, uint64, uintptr:
		b.Write(strconv.AppendUint(b.AvailableBuffer(), reflect.ValueOf(v).Uint(), 10))
	case float32:
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), float64(v), 'g', -1, 32))
	case float64:
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), v, 'g', -1, 64))
	default:
		appendString(b, fmt.Sprint(v))
	}
}

// safeAppend is v.AppendText(buf), a panic (a nil receiver) reported as an error.
func safeAppend(v encoding.TextAppender, buf []byte) (text []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = nil, fmt.Errorf("PANIC=AppendText method: %v", r)
		}
	}()
	return v.AppendText(buf)
}

// safeString is fn() (v's Error or String), a panic written as logrus writes it.
func safeString(v any, method string, fn func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
				s = "<nil>"
			} else {
				s = fmt.Sprintf("%%!v(PANIC=%s method: %v)", method, r)
			}
		}
	}()
	return fn()
}

func appendString(b *bytes.Buffer, s string) {
	if !needsQuoting(s) {
		b.WriteString(s)
		return
	}
	if plain(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	b.Write(strconv.AppendQuote(b.AvailableBuffer(), s))
}

// appendQuoted writes text, which may lie in b's spare room (appended to
// b.AvailableBuffer()), quoted as appendString quotes.
func appendQuoted(b *bytes.Buffer, text []byte) {
	if !needsQuoting(text) {
		b.Write(text)
		return
	}
	n := len(text)
	if avail := b.AvailableBuffer(); plain(text) && cap(avail) >= n+2 && &avail[:1][0] == &text[0] {
		// Quoting printable ASCII without quotes or backslashes only wraps it: shift it
		// right by one in place.
		line := avail[:n+2]
		copy(line[1:], line[:n])
		line[0], line[n+1] = '"', '"'
		b.Write(line)
		return
	}
	appendString(b, string(text)) // a copy: writing to b may overwrite text
}

// plain reports whether s is printable ASCII without '"' or '\': strconv.Quote only
// wraps such text in quotes.
func plain[S string | []byte](s S) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// needsQuoting is logrus's: anything but letters, digits and -._/@^+.
func needsQuoting[S string | []byte](s S) bool {
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '/', c == '@', c == '^', c == '+':
		default:
			return true
		}
	}
	return false
}
