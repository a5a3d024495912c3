package fairscheduler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/beevik/etree"
)

// Rule is one rule of the queuePlacementPolicy (QueuePlacementRule).
type Rule struct {
	Name   string // specified, user, primaryGroup, secondaryGroupExistingQueue, nestedUserQueue, default, reject
	Create bool   // the rule may name a queue the file does not declare; it is then created
	Queue  string // default's queue attribute
	Nested *Rule  // nestedUserQueue's inner rule
}

// ErrRejected is the reject rule's answer (and no rule's).
var ErrRejected = errors.New("Application rejected by queue placement policy")

func (p *parser) rules(el *etree.Element) []Rule {
	var out []Rule
	for _, r := range el.ChildElements() {
		if r.Tag != "rule" {
			p.refuse(r, "inside <queuePlacementPolicy> is not a <rule>")
			continue
		}
		if rule, ok := p.rule(r); ok {
			out = append(out, rule)
		}
	}
	if len(out) == 0 {
		p.errs = append(p.errs, "<queuePlacementPolicy> has no rules")
		return out
	}
	for i, r := range out {
		if r.terminal() && i != len(out)-1 {
			p.errs = append(p.errs, fmt.Sprintf("<queuePlacementPolicy>: rules after the terminal rule %q are never used", r.Name))
			break
		}
	}
	if !out[len(out)-1].terminal() {
		p.errs = append(p.errs, "<queuePlacementPolicy>: the last rule must be terminal (default, reject, or a rule with create=\"true\")")
	}
	return out
}

func (p *parser) rule(el *etree.Element) (Rule, bool) {
	r := Rule{Name: el.SelectAttrValue("name", ""), Create: el.SelectAttrValue("create", "true") != "false"}
	switch r.Name {
	case "specified", "user", "primaryGroup":
	case "secondaryGroupExistingQueue":
		r.Create = false
	case "default":
		r.Queue = el.SelectAttrValue("queue", "root.default")
		if !strings.HasPrefix(r.Queue, "root.") {
			r.Queue = "root." + r.Queue
		}
	case "reject":
		r.Create = false
	case "nestedUserQueue":
		inner := el.ChildElements()
		if len(inner) != 1 || inner[0].Tag != "rule" {
			p.errs = append(p.errs, "<rule name=\"nestedUserQueue\"> must hold exactly one <rule>")
			return r, false
		}
		n, ok := p.rule(inner[0])
		if !ok {
			return r, false
		}
		if n.Name == "nestedUserQueue" || n.Name == "reject" {
			p.errs = append(p.errs, fmt.Sprintf("<rule name=\"nestedUserQueue\"> cannot nest %q", n.Name))
			return r, false
		}
		r.Nested = &n
	default:
		p.errs = append(p.errs, fmt.Sprintf("<rule name=%q> is not a known placement rule", r.Name))
		return r, false
	}
	return r, true
}

// terminal: the rule always places (or rejects) the application.
func (r Rule) terminal() bool {
	switch r.Name {
	case "default", "reject":
		return true
	case "specified", "secondaryGroupExistingQueue":
		return false // "specified" passes over a submission naming no queue
	}
	return r.Create
}

// DefaultRules is the policy when the file names none (QueuePlacementPolicy.fromConfiguration):
// the specified queue, then (with user-as-default-queue) the user's, then root.default;
// create comes from allow-undeclared-pools.
func DefaultRules(userAsDefault, create bool) []Rule {
	rules := []Rule{{Name: "specified", Create: create}}
	if userAsDefault {
		rules = append(rules, Rule{Name: "user", Create: create})
	}
	if !userAsDefault || !create {
		rules = append(rules, Rule{Name: "default", Create: true, Queue: "root.default"})
	}
	return rules
}

// Place runs rules for a submission by user naming requested: the queue, as a full path,
// and whether it is one the rules may create (it is not declared). declared tells whether
// a queue path exists; groups gives the user's groups, primary first.
func Place(rules []Rule, user, requested string, groups func() []string, declared func(string) bool) (queue string, create bool, err error) {
	for _, r := range rules {
		q, ok := r.assign(user, requested, groups, declared)
		if r.Name == "reject" {
			return "", false, ErrRejected
		}
		if !ok || q == "" {
			continue
		}
		if declared(q) {
			return q, false, nil
		}
		if r.Create {
			return q, true, nil
		}
	}
	return "", false, ErrRejected
}

// assign is the queue the rule names, before the create check; ok false when it names none.
func (r Rule) assign(user, requested string, groups func() []string, declared func(string) bool) (string, bool) {
	switch r.Name {
	case "specified":
		if requested == "" || requested == "default" {
			return "", false
		}
		if !strings.HasPrefix(requested, "root.") && requested != "root" {
			requested = "root." + requested
		}
		return requested, true
	case "user":
		return "root." + cleanName(user), true
	case "primaryGroup":
		gs := groups()
		if len(gs) == 0 {
			return "", false
		}
		return "root." + cleanName(gs[0]), true
	case "secondaryGroupExistingQueue":
		gs := groups()
		for _, g := range gs[min(1, len(gs)):] {
			if q := "root." + cleanName(g); declared(q) {
				return q, true
			}
		}
		return "", false
	case "nestedUserQueue":
		parent, ok := r.Nested.assign(user, requested, groups, declared)
		if !ok || parent == "" || (!declared(parent) && !r.Nested.Create) {
			return "", false
		}
		return parent + "." + cleanName(user), true
	case "default":
		return r.Queue, true
	}
	return "", false
}

// cleanName is a user or group name as a queue name: periods become "_dot_", as the Java
// rules write them.
func cleanName(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), ".", "_dot_")
}
