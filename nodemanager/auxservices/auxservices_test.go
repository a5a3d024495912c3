package auxservices

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"testing"

	"github.com/bobbin-yarn/bobbin/records"
)

// recording is a service that writes down what the set tells it.
type recording struct {
	name    string
	failing bool // Start fails
	calls   *[]string
}

func (r *recording) Name() string { return r.name }
func (r *recording) Start() error {
	if r.failing {
		return errors.New("port taken")
	}
	*r.calls = append(*r.calls, r.name+" start")
	return nil
}
func (r *recording) Stop(context.Context) error {
	*r.calls = append(*r.calls, r.name+" stop")
	return nil
}
func (r *recording) Meta() []byte { return []byte(r.name) }
func (r *recording) InitializeApplication(init AppInit) error {
	if len(init.Data) == 0 {
		return errors.New("no token")
	}
	*r.calls = append(*r.calls, r.name+" init "+init.App.String()+" "+init.User+" "+string(init.Data))
	return nil
}
func (r *recording) StopApplication(app records.ApplicationID) {
	*r.calls = append(*r.calls, r.name+" stop "+app.String())
}

// hooked hears of containers too.
type hooked struct{ recording }

func (h *hooked) InitializeContainer(id records.ContainerID, user string) {
	*h.calls = append(*h.calls, h.name+" container "+id.String()+" "+user)
}
func (h *hooked) StopContainer(id records.ContainerID, _ string) {
	*h.calls = append(*h.calls, h.name+" container stop "+id.String())
}

// A set runs its services through their lifecycle: started and stopped in name order,
// each application's service data to the service it names (an unknown name refused), the
// end of an application and the container hooks to every service that takes them, and
// every service's metadata to AMs and to containers' environments.
func TestSetLifecycle(t *testing.T) {
	var calls []string
	app := records.ApplicationID{ClusterTimestamp: 1, ID: 2}
	ctr := records.ContainerID{Attempt: app.Attempt(1), ID: 3}
	set, err := NewSet(&hooked{recording{name: "spark_shuffle", calls: &calls}}, &recording{name: "mapreduce_shuffle", calls: &calls})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Start(); err != nil {
		t.Fatal(err)
	}
	if err := set.InitializeApplication("mapreduce_shuffle", AppInit{App: app, User: "alice", Data: []byte("tok")}); err != nil {
		t.Fatal(err)
	}
	if err := set.InitializeApplication("mapreduce_shuffle", AppInit{App: app, User: "alice"}); err == nil {
		t.Fatal("the service's refusal was not passed on")
	}
	if err := set.InitializeApplication("flink_shuffle", AppInit{App: app, Data: []byte("x")}); err == nil || err.Error() != "the auxService:flink_shuffle does not exist" {
		t.Fatalf("an unknown service: %v", err)
	}
	set.InitializeContainer(ctr, "alice")
	set.StopContainer(ctr, "alice")
	set.StopApplication(app)
	if err := set.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"mapreduce_shuffle start", "spark_shuffle start", "mapreduce_shuffle init application_1_0002 alice tok",
		"spark_shuffle container " + ctr.String() + " alice", "spark_shuffle container stop " + ctr.String(),
		"mapreduce_shuffle stop application_1_0002", "spark_shuffle stop application_1_0002", "mapreduce_shuffle stop", "spark_shuffle stop"}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls\n%q\nwant\n%q", calls, want)
	}
	meta := set.Meta()
	if len(meta) != 2 || meta[0].GetKey() != "mapreduce_shuffle" || string(meta[1].GetValue()) != "spark_shuffle" {
		t.Fatalf("meta %v", meta)
	}
	if env := set.Env(); env["NM_AUX_SERVICE_spark_shuffle"] != base64.StdEncoding.EncodeToString([]byte("spark_shuffle")) || len(env) != 2 {
		t.Fatalf("env %v", env)
	}
	if !set.Has("spark_shuffle") || set.Has("flink_shuffle") || set.Empty() {
		t.Fatal("Has/Empty")
	}
}

// A service that cannot start stops those started before it; two services of one name
// are refused.
func TestSetStartFailureAndDuplicates(t *testing.T) {
	var calls []string
	set, _ := NewSet(&recording{name: "a", calls: &calls}, &recording{name: "b", failing: true, calls: &calls})
	if err := set.Start(); err == nil || err.Error() != "auxiliary service b: port taken" {
		t.Fatalf("start: %v", err)
	}
	if !slices.Equal(calls, []string{"a start", "a stop"}) {
		t.Fatalf("calls %q", calls)
	}
	if _, err := NewSet(&recording{name: "a", calls: &calls}, &recording{name: "a", calls: &calls}); err == nil {
		t.Fatal("a name twice was taken")
	}
	if empty, _ := NewSet(); !empty.Empty() || empty.Meta() != nil {
		t.Fatal("an empty set")
	}
}
