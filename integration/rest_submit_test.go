package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestRESTSubmissionRunsToFinished submits a distributed-shell-like application with
// nothing but HTTP — POST /apps/new-application, then POST /apps with its launch
// context — to real Bobbin daemons: its AM (`bobbin demo-am`) runs a command in two
// containers and the application ends FINISHED/SUCCEEDED, with the containers' output in
// their log dirs. Needs no Hadoop.
func TestRESTSubmissionRunsToFinished(t *testing.T) {
	c := startBobbinCluster(t)
	base := "http://" + c.rmWeb + "/ws/v1/cluster"
	call := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		json.Unmarshal(b, &v)
		return resp.StatusCode, v
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	me := u.Username
	code, na := call("POST", "/apps/new-application?user.name="+me, "")
	id, _ := na["application-id"].(string)
	if code != 200 || id == "" {
		t.Fatalf("new-application: %d %v", code, na)
	}
	am := fmt.Sprintf("%s demo-am --scheduler %s --containers 2 --command 'echo hello from rest' 1><LOG_DIR>/AppMaster.stdout 2><LOG_DIR>/AppMaster.stderr",
		bobbinBinary(t), c.schedAddr)
	sub, _ := json.Marshal(map[string]any{
		"application-id": id, "application-name": "rest-shell", "application-type": "YARN", "queue": "default", "max-app-attempts": 1,
		"am-container-spec": map[string]any{"commands": map[string]any{"command": am}},
		"resource":          map[string]any{"memory": 256, "vCores": 1},
	})
	if code, v := call("POST", "/apps?user.name="+me, string(sub)); code != http.StatusAccepted {
		t.Fatalf("submit: %d %v", code, v)
	}
	var app map[string]any
	if !testutil.Poll(90*time.Second, func() bool {
		_, v := call("GET", "/apps/"+id, "")
		app, _ = v["app"].(map[string]any)
		st, _ := app["state"].(string)
		return st == "FINISHED" || st == "FAILED" || st == "KILLED"
	}) {
		t.Fatalf("the REST-submitted application did not end: %v\nRM log:\n%s\nNM log:\n%s", app, tail(c.rm.Log(), 30), tail(c.nm.Log(), 30))
	}
	if app["state"] != "FINISHED" || app["finalStatus"] != "SUCCEEDED" || app["name"] != "rest-shell" || app["memorySeconds"].(float64) <= 0 {
		t.Fatalf("the REST-submitted application ended %v\nNM log:\n%s", app, tail(c.nm.Log(), 30))
	}
	outs, _ := filepath.Glob(filepath.Join(c.logDir, id, "container_*", "stdout"))
	hellos := 0
	for _, f := range outs {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "hello from rest") {
			hellos++
		}
	}
	if hellos != 2 {
		t.Fatalf("%d containers printed the command's output, want 2 (%v)", hellos, outs)
	}
}
