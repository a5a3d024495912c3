package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// browser is headless Chromium (Debian's chromium), run once per page.
type browser struct {
	bin, profile string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("needs chromium (Debian package chromium) for the browser tests")
	}
	return &browser{bin: bin, profile: t.TempDir()}
}

var consoleLine = regexp.MustCompile(`:CONSOLE[:(]\d*\)?\]? (.*)`)

// load opens url, returns its DOM after the scripts ran and every console message the page
// logged; with shot set it also saves a screenshot there.
func (b *browser) load(t *testing.T, url, shot string) (dom string, console []string) {
	t.Helper()
	run := func(args ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, b.bin, append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
			"--no-first-run", "--user-data-dir=" + b.profile, "--enable-logging=stderr", "--v=0", "--window-size=1280,1000"}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	args := []string{"--dump-dom", url}
	if shot != "" {
		args = append([]string{"--screenshot=" + shot}, args...)
	}
	dom, logs := run(args...)
	for _, l := range strings.Split(logs, "\n") {
		if m := consoleLine.FindStringSubmatch(l); m != nil {
			console = append(console, m[1])
		}
	}
	return dom, console
}

// artifacts is where browser tests keep their screenshots: $BOBBIN_ARTIFACTS, else
// artifacts/screenshots at the repository's root (ignored by git).
func artifacts(t *testing.T) string {
	dir := os.Getenv("BOBBIN_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	dir = filepath.Join(dir, "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	return abs
}

// The detector itself: a page whose script throws is caught.
func TestBrowserSeesScriptErrors(t *testing.T) {
	b := newBrowser(t)
	_, console := b.load(t, `data:text/html,<html><body><script>undefinedFn()</script></body></html>`, "")
	if len(console) != 1 || !strings.Contains(console[0], "undefinedFn is not defined") {
		t.Fatalf("console %q", console)
	}
}

// The web UI in a real browser: headless Chromium loads the RM's /cluster, an application
// page, /cluster/scheduler, /cluster/nodes and the NM's container-log page while an
// application runs two containers; each page's script runs (it marks the body ready),
// nothing is logged to the console, and a screenshot of each is kept.
func TestWebUIInBrowser(t *testing.T) {
	b := newBrowser(t)
	c := startBobbinCluster(t)
	done := make(chan string, 1)
	go func() {
		out, _ := c.demo(t, "--containers", "2", "--command", `(echo "hello from $CONTAINER_ID"; sleep 120)`)
		done <- out
	}()
	var app string
	if !testutil.Poll(30*time.Second, func() bool {
		out, _ := exec.Command(bobbinBinary(t), "client", "--rm", c.rmAddr, "apps").Output()
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "application_") {
				app = f
			}
		}
		return app != "" && len(containerProcesses(app, "_000002", "_000003")) >= 2
	}) {
		t.Fatalf("containers never ran (app %q)\nNM:\n%s", app, c.nm.Log())
	}
	defer func() {
		exec.Command(bobbinBinary(t), "client", "--rm", c.rmAddr, "kill", app).Run()
		<-done
	}()
	container := "container_" + strings.TrimPrefix(app, "application_") + "_01_000002"
	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	// The container-log link as the RM's application page gives it.
	resp, err := http.Get("http://" + c.rmWeb + "/cluster/app/" + app)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	logLink := regexp.MustCompile(`href="(http://[^"]*/node/containerlogs/` + container + `/[^"]*)"`).FindStringSubmatch(string(page))
	if logLink == nil {
		t.Fatalf("the application page links no log of %s:\n%s", container, page)
	}
	dir := artifacts(t)
	for _, p := range []struct{ name, url, want string }{
		{"rm-cluster", "http://" + c.rmWeb + "/cluster", app},
		{"rm-app", "http://" + c.rmWeb + "/cluster/app/" + app, container},
		{"rm-scheduler", "http://" + c.rmWeb + "/cluster/scheduler", "queue-default"},
		{"rm-nodes", "http://" + c.rmWeb + "/cluster/nodes", "RUNNING"},
		{"nm-container-logs", logLink[1], "stdout"},
		{"nm-container-stdout", logLink[1] + "/stdout", "hello from " + container},
		{"nm-node", "http://" + c.nmWeb + "/node", container},
		// The apps table's search and pages, made by the script.
		{"rm-cluster-paged", "http://" + c.rmWeb + "/cluster", `class="table-tools"`},
		// The Java daemons' other pages, and the kill button's script.
		{"rm-about", "http://" + c.rmWeb + "/cluster/cluster", "ResourceManager version"},
		{"rm-attempt", "http://" + c.rmWeb + "/cluster/appattempt/" + strings.Replace(app, "application_", "appattempt_", 1) + "_000001", container},
		{"rm-container", "http://" + c.rmWeb + "/cluster/container/" + container, "Diagnostics"},
		{"rm-nodes-running", "http://" + c.rmWeb + "/cluster/nodes/running", "RUNNING nodes"},
		{"rm-nodelabels", "http://" + c.rmWeb + "/cluster/nodelabels", "no node labels"},
		{"rm-app-kill", "http://" + c.rmWeb + "/cluster/app/" + app, `class="kill"`},
		{"nm-application", "http://" + c.nmWeb + "/node/application/" + app, container},
		{"nm-container", "http://" + c.nmWeb + "/node/container/" + container, "RUNNING"},
	} {
		shot := filepath.Join(dir, p.name+".png")
		dom, console := b.load(t, p.url, shot)
		if !strings.Contains(dom, `data-ui-ready="1"`) || !strings.Contains(dom, p.want) {
			t.Errorf("%s (%s): the page's script did not run or it lacks %q:\n%.3000s", p.name, p.url, p.want, dom)
		}
		if len(console) > 0 {
			t.Errorf("%s (%s) logged to the console: %q", p.name, p.url, console)
		}
		if st, err := os.Stat(shot); err != nil || st.Size() < 5000 {
			t.Errorf("%s: no screenshot (%v)", p.name, err)
		}
	}
	t.Logf("screenshots in %s", dir)
}
