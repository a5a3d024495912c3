package logaggregation

import (
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// The LogAggregationContext's patterns select files as the Java NM's LogValue does: whole
// names, include then exclude, the rolled pair while the application runs; no context
// selects everything, and a bad pattern is an error naming it.
func TestLogPatterns(t *testing.T) {
	lc := &yarnpb.LogAggregationContextProto{IncludePattern: proto.String("std.*"), ExcludePattern: proto.String("stdin"),
		RolledLogsIncludePattern: proto.String("syslog"), RolledLogsExcludePattern: proto.String("")}
	selects := func(lc *yarnpb.LogAggregationContextProto, final bool, name string) bool {
		inc, exc, err := logPatterns(lc, final)
		if err != nil {
			t.Fatal(err)
		}
		return (inc == nil || inc.MatchString(name)) && (exc == nil || !exc.MatchString(name))
	}
	for _, c := range []struct {
		lc    *yarnpb.LogAggregationContextProto
		final bool
		name  string
		want  bool
	}{
		{nil, true, "anything", true},
		{nil, false, "anything", true},
		{lc, true, "stdout", true},
		{lc, true, "stdin", false},
		{lc, true, "syslog", false},
		{lc, true, "xstdout", false}, // whole names only
		{lc, false, "syslog", true},
		{lc, false, "stdout", false},
	} {
		if got := selects(c.lc, c.final, c.name); got != c.want {
			t.Errorf("context %v final %v %q: selected %v, want %v", c.lc != nil, c.final, c.name, got, c.want)
		}
	}
	if _, _, err := logPatterns(&yarnpb.LogAggregationContextProto{IncludePattern: proto.String("(")}, true); err == nil {
		t.Error("a bad pattern was accepted")
	}
}
