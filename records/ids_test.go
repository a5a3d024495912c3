package records

import (
	"fmt"
	"testing"
)

func TestIDStrings(t *testing.T) {
	app := ApplicationID{ClusterTimestamp: 1732269000000, ID: 1}
	if app.String() != "application_1732269000000_0001" {
		t.Fatal(app)
	}
	if (ApplicationID{1, 12345}).String() != "application_1_12345" {
		t.Fatal("wide id")
	}
	att := AttemptID{App: app, Attempt: 1}
	if att.String() != "appattempt_1732269000000_0001_000001" {
		t.Fatal(att)
	}
	c := ContainerID{Attempt: att, ID: 1}
	if c.String() != "container_1732269000000_0001_01_000001" {
		t.Fatal(c)
	}
	e := ContainerID{Attempt: att, ID: 3<<40 | 7}
	if e.String() != "container_e03_1732269000000_0001_01_000007" {
		t.Fatal(e)
	}
	for _, x := range []ContainerID{c, e} {
		back, err := ParseContainerID(x.String())
		if err != nil || back != x {
			t.Fatalf("%s -> %v %v", x, back, err)
		}
		if ContainerIDFromProto(x.Proto()) != x {
			t.Fatal("proto round trip")
		}
	}
	if got, err := ParseApplicationID("application_1_0001"); err != nil || got != (ApplicationID{1, 1}) {
		t.Fatal(got, err)
	}
	for _, bad := range []string{"application_1", "app_1_2", "application_x_1", "application_1_-1"} {
		if _, err := ParseApplicationID(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := ParseContainerID("container_1_2_3"); err == nil {
		t.Error("short container id accepted")
	}
	if back, err := ParseAttemptID(att.String()); err != nil || back != att {
		t.Errorf("%s -> %v %v", att, back, err)
	}
	for _, bad := range []string{"appattempt_1_2", "attempt_1_2_3", "appattempt_1_2_x", "appattempt_1_2_-3"} {
		if _, err := ParseAttemptID(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// AppendString writes what the fmt verbs it replaced wrote, for every kind of field.
func TestContainerIDAppendStringIsFmt(t *testing.T) {
	for _, c := range []ContainerID{
		{AttemptID{ApplicationID{1700000000000, 1}, 1}, 1},
		{AttemptID{ApplicationID{1700000000000, 12345}, 123}, 1234567},
		{AttemptID{ApplicationID{1, 0}, 0}, 0},
		{AttemptID{ApplicationID{-5, -3}, -2}, 3<<40 | 17},
		{AttemptID{ApplicationID{1700000000000, 7}, 2}, 123<<40 | 99},
	} {
		epoch, seq := c.ID>>40, c.ID&(1<<40-1)
		prefix := "container_"
		if epoch > 0 {
			prefix += fmt.Sprintf("e%02d_", epoch)
		}
		want := fmt.Sprintf("%s%d_%04d_%02d_%06d", prefix, c.Attempt.App.ClusterTimestamp, c.Attempt.App.ID, c.Attempt.Attempt, seq)
		if got := c.String(); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
}
