package fairscheduler

import (
	"strings"
	"testing"
)

func TestThreeWeightedQueuesAsCapacityKeys(t *testing.T) {
	a, err := Load("testdata/three-queues.xml")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := a.CapacityKeys(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"root.queues": "small,medium,large,default",
		// weights 1:2:3 and root.default's implicit 1, out of 7
		"root.small.capacity": "14.285714", "root.medium.capacity": "28.571429", "root.large.capacity": "42.857143", "root.default.capacity": "14.285714",
		"root.small.bobbin.max-running-apps":     "2",
		"root.medium.bobbin.max-running-apps":    "-1",
		"root.small.bobbin.policy":               "priority",
		"root.medium.bobbin.policy":              "fair",
		"root.large.bobbin.policy":               "drf",
		"root.medium.acl_submit_applications":    "alice,bob etl",
		"root.small.acl_submit_applications":     " ",
		"root.large.maximum-am-resource-percent": "0.2",
		"root.small.maximum-am-resource-percent": "0.5",
		"root.large.maximum-capacity":            "90",
		"root.small.user-limit-factor":           "8", // 1/0.142857, rounded up
		"bobbin.user.carol.max-running-apps":     "1",
		"bobbin.user-max-running-apps-default":   "5",
		"root.acl_submit_applications":           "*",
	}
	for k, v := range want {
		full := k
		if strings.HasPrefix(k, "root.") || strings.HasPrefix(k, "bobbin.user") {
			full = prefix + k
		}
		if got := keys[full]; got != v {
			t.Errorf("%s = %q, want %q", full, got, v)
		}
	}
	if keys["bobbin.scheduler.preemption.enabled"] != "true" || keys["bobbin.scheduler.preemption.starved-threshold"] != "0.6" {
		t.Errorf("preemption keys: %q %q", keys["bobbin.scheduler.preemption.enabled"], keys["bobbin.scheduler.preemption.starved-threshold"])
	}
	// A created queue joins root with weight 1.
	keys, err = a.CapacityKeys([]string{"root.dave"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if keys[prefix+"root.queues"] != "small,medium,large,default,dave" || keys[prefix+"root.dave.capacity"] != "12.5" {
		t.Errorf("with root.dave created: %q, dave %q", keys[prefix+"root.queues"], keys[prefix+"root.dave.capacity"])
	}
}

func TestPlacementPolicy(t *testing.T) {
	a, err := Load("testdata/three-queues.xml")
	if err != nil {
		t.Fatal(err)
	}
	declared := a.Declared()
	groups := map[string][]string{"alice": {"medium"}, "bob": {"staff"}}
	for _, tc := range []struct{ user, requested, want string }{
		{"alice", "large", "root.large"},      // specified
		{"alice", "root.large", "root.large"}, // specified, by path
		{"alice", "default", "root.medium"},   // "default" is no choice: the primary group's queue
		{"bob", "", "root.small"},             // group staff has none: the default rule
		{"bob", "nowhere", "root.small"},      // specified, undeclared, create=false: passed over
	} {
		got, create, err := Place(a.Placement, tc.user, tc.requested, func() []string { return groups[tc.user] }, func(q string) bool { return declared[q] })
		if err != nil || got != tc.want || create {
			t.Errorf("%s asking %q: %q create=%v %v, want %q", tc.user, tc.requested, got, create, err, tc.want)
		}
	}
	// The default policy (no queuePlacementPolicy): specified, then the user's queue, created.
	rules := DefaultRules(true, true)
	if got, create, err := Place(rules, "erin", "default", nil, func(q string) bool { return declared[q] }); got != "root.erin" || !create || err != nil {
		t.Errorf("default policy for erin: %q %v %v", got, create, err)
	}
	if got, _, err := Place(DefaultRules(true, false), "erin", "nowhere", nil, func(q string) bool { return declared[q] }); got != "root.default" || err != nil {
		t.Errorf("allow-undeclared-pools false: %q %v", got, err)
	}
	reject := []Rule{{Name: "specified"}, {Name: "reject"}}
	if _, _, err := Place(reject, "erin", "", nil, func(string) bool { return false }); err != ErrRejected {
		t.Errorf("reject rule: %v", err)
	}
}

// minResources and maxResources written as amounts, in both Hadoop lines' forms, become
// the group's floor and ceiling keys.
func TestAllocationFileAmounts(t *testing.T) {
	a, err := Parse("f.xml", []byte(`<allocations>
  <queue name="a"><minResources>6144 mb, 6 vcores</minResources><maxResources>8192.5 MB,8vcores</maxResources></queue>
  <queue name="b"><minResources>vcores=2, memory-mb=2048</minResources><maxResources>50%</maxResources></queue>
</allocations>`))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := a.CapacityKeys(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"root.a." + KeyMinimumResource: "[memory=6144,vcores=6]",
		"root.a." + KeyMaximumResource: "[memory=8192,vcores=8]",
		"root.b." + KeyMinimumResource: "[memory=2048,vcores=2]",
		"root.b.maximum-capacity":      "50",
	} {
		if got := keys["yarn.scheduler.capacity."+k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := keys["yarn.scheduler.capacity.root.b."+KeyMaximumResource]; ok {
		t.Error("a share-form maxResources also written as amounts")
	}
}

// What Bobbin cannot honour is refused, naming the element.
func TestAllocationFileRefusals(t *testing.T) {
	for body, want := range map[string]string{
		`<queue name="a"><minResources>1024 mb</minResources></queue>`:         "queue root.a: <minResources> \"1024 mb\": Missing resource: vcores",
		`<queue name="a"><minResources>50%</minResources></queue>`:             "queue root.a: <minResources> \"50%\": write it as amounts",
		`<queue name="a"><maxResources>plenty</maxResources></queue>`:          "queue root.a: <maxResources> \"plenty\": write it as amounts",
		`<queue name="a"><maxResources>memory-mb=lots</maxResources></queue>`:  "each part must be name=amount",
		`<queue name="a"><weight>0</weight></queue>`:                           "<weight> must be positive",
		`<queue name="a"><weight>heavy</weight></queue>`:                       `<weight> "heavy" is not a number`,
		`<queue name="a"><schedulingPolicy>lottery</schedulingPolicy></queue>`: "must be fair, drf or fifo",
		`<queue name="a.b"/>`:                          "contain no period",
		`<queue name="a"><colour>red</colour></queue>`: "<colour> is not a known queue element",
		`<queuePlacementPolicy><rule name="user" create="false"/></queuePlacementPolicy>`:          "the last rule must be terminal",
		`<queuePlacementPolicy><rule name="reject"/><rule name="default"/></queuePlacementPolicy>`: "never used",
		`<queuePlacementPolicy><rule name="astrology"/></queuePlacementPolicy>`:                    "not a known placement rule",
		`<userMaxAppsDefault>-3</userMaxAppsDefault>`:                                              "not a non-negative integer",
	} {
		_, err := Parse("fair-scheduler.xml", []byte("<allocations>"+body+"</allocations>"))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "fair-scheduler.xml") {
			t.Errorf("%s: %v, want an error with %q", body, err, want)
		}
	}
	if _, err := Parse("f.xml", []byte("<configuration/>")); err == nil || !strings.Contains(err.Error(), "top-level element not <allocations>") {
		t.Errorf("wrong root: %v", err)
	}
	if _, err := Parse("f.xml", []byte("<allocations><queue")); err == nil {
		t.Error("broken XML accepted")
	}
	a, err := Parse("f.xml", []byte(`<allocations><queue name="a"><weight>1</weight><maxResources>5%</maxResources></queue></allocations>`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CapacityKeys(nil, false); err == nil || !strings.Contains(err.Error(), "below its weight's share") {
		t.Errorf("maxResources below the weight share: %v", err)
	}
	a, err = Parse("f.xml", []byte(`<allocations><queue name="p"><schedulingPolicy>fifo</schedulingPolicy><queue name="c"/></queue></allocations>`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CapacityKeys(nil, false); err == nil || !strings.Contains(err.Error(), "queue root.p: <schedulingPolicy> fifo is only for leaf queues") {
		t.Errorf("fifo parent: %v", err)
	}
}

// FuzzParse: an allocation file never crashes the reader.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`<allocations><queue name="a"><weight>2</weight><queue name="b"/></queue><queuePlacementPolicy><rule name="nestedUserQueue"><rule name="primaryGroup"/></rule><rule name="default"/></queuePlacementPolicy></allocations>`))
	f.Add([]byte(`<allocations><user name="x"><maxRunningApps>1</maxRunningApps></user></allocations>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := Parse("fuzz.xml", b); err == nil {
			_, _ = a.CapacityKeys([]string{"root.x.y"}, true)
		}
	})
}
