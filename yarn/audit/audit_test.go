package audit

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

// The lines are Java's, key for key, in Java's order.
func TestLinesAsJavasAuditLoggers(t *testing.T) {
	if got, want := Line("alice", "10.0.0.7", "Submit Application Request", "ClientRMService", Success, "", "",
		KV{"APPID", "application_1_0001"}, KV{"QUEUENAME", "default"}),
		"USER=alice\tIP=10.0.0.7\tOPERATION=Submit Application Request\tTARGET=ClientRMService\tRESULT=SUCCESS\tAPPID=application_1_0001\tQUEUENAME=default"; got != want {
		t.Errorf("success:\n%q\nwant\n%q", got, want)
	}
	if got, want := Line("bob", "10.0.0.8", "refreshQueues", "AdminService", Failure, "Exception refreshing queues", "User bob doesn't have permission"),
		"USER=bob\tIP=10.0.0.8\tOPERATION=refreshQueues\tTARGET=AdminService\tRESULT=FAILURE\tDESCRIPTION=Exception refreshing queues\tPERMISSIONS=User bob doesn't have permission"; got != want {
		t.Errorf("failure:\n%q\nwant\n%q", got, want)
	}
	if ip := IP(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8033}); ip != "127.0.0.1" {
		t.Errorf("IP = %q", ip)
	}
	var out bytes.Buffer
	log := logrus.New()
	log.SetOutput(&out)
	l := New(logrus.NewEntry(log), "rmaudit")
	l.Failure("bob", "", "Kill Application Request", "ClientRMService", "Unauthorized user", "MODIFY_APP", KV{"APPID", "application_1_0002"})
	if s := out.String(); !strings.Contains(s, "level=warning") || !strings.Contains(s, "component=rmaudit") || !strings.Contains(s, `RESULT=FAILURE`) {
		t.Errorf("the logged line: %s", s)
	}
	if w := Why(errors.New("org.apache.hadoop.yarn.exceptions.YarnException: Failed to re-init queues : a\nb")); w != "Failed to re-init queues : a b" {
		t.Errorf("Why = %q", w)
	}
	var none *Logger
	none.Success("x", "", "y", "z") // a daemon without a logger audits nothing, and does not fail
}
