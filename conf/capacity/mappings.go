package capacity

import (
	"fmt"
	"strconv"
	"strings"
)

// Queue mappings (yarn.scheduler.capacity.queue-mappings): which queue a user's
// submission goes to, as the Capacity Scheduler's user/group placement rule decides it.
const (
	KeyQueueMappings         = Prefix + "queue-mappings"
	KeyQueueMappingsOverride = Prefix + "queue-mappings-override.enable"
	// DefaultQueue is the queue a submission naming none goes to, and the one mappings
	// replace unless queue-mappings-override.enable is set.
	DefaultQueue = "default"

	mapUser           = "%user"
	mapPrimaryGroup   = "%primary_group"
	mapSecondaryGroup = "%secondary_group"
)

// QueueMapping is one entry of queue-mappings: u:<user>:<queue> or g:<group>:<queue>.
// The user may be %user (every user); the queue may be %user, %primary_group or (3.x)
// %secondary_group.
type QueueMapping struct {
	Group  bool // g: (else u:)
	Source string
	Queue  string
}

// mappings reads queue-mappings and queue-mappings-override.enable. A named queue must
// be a leaf of the tree, as the Java RM checks at start.
func (p *parser) mappings() {
	raw := p.str(KeyQueueMappings, "")
	for _, entry := range strings.Split(raw, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, ":")
		if len(parts) != 3 || (parts[0] != "u" && parts[0] != "g") || parts[1] == "" || parts[2] == "" {
			p.errorf(KeyQueueMappings, raw, "Illegal queue mapping %s (want u:user:queue or g:group:queue)", entry)
			continue
		}
		m := QueueMapping{Group: parts[0] == "g", Source: parts[1], Queue: parts[2]}
		switch m.Queue {
		case mapUser, mapPrimaryGroup, mapSecondaryGroup:
		default:
			if strings.Contains(m.Queue, "%") {
				// parent.%user: a leaf created on submission (3.x auto-created queues).
				p.errorf(KeyQueueMappings, raw, "mapping %s names an auto-created queue; Bobbin does not create queues on submission", entry)
				continue
			}
			if q, ok := p.t.byName[m.Queue]; !ok || !q.IsLeaf() {
				p.errorf(KeyQueueMappings, raw, "mapping contains invalid or non-leaf queue %s", m.Queue)
				continue
			}
		}
		if m.Group && m.Source == mapUser {
			p.errorf(KeyQueueMappings, raw, "Illegal queue mapping %s (%%user is not a group)", entry)
			continue
		}
		p.t.Mappings = append(p.t.Mappings, m)
	}
	if v, ok := p.lookup(KeyQueueMappingsOverride); ok && strings.TrimSpace(v) != "" {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			p.errorf(KeyQueueMappingsOverride, v, "not a boolean (true or false)")
		}
		p.t.MappingsOverride = b
	}
}

// PlaceSubmission is the queue a submission of user to requested goes to: requested
// ("" is DefaultQueue) unless a mapping applies — to DefaultQueue, or to any queue with
// queue-mappings-override.enable — in which case the first matching mapping's queue.
// groups gives the user's groups, primary first; it is called only when a mapping needs
// them, and a user with none then fails the submission, as the Java RM's group lookup
// does ("No groups found for user ...").
func (t *Tree) PlaceSubmission(user, requested string, groups func() []string) (queue string, mapped bool, err error) {
	if requested == "" {
		requested = DefaultQueue
	}
	if len(t.Mappings) == 0 || (requested != DefaultQueue && !t.MappingsOverride) {
		return requested, false, nil
	}
	var gs []string
	looked := false
	userGroups := func() ([]string, error) {
		if !looked {
			gs, looked = groups(), true
		}
		if len(gs) == 0 {
			return nil, fmt.Errorf("No groups found for user %s", user)
		}
		return gs, nil
	}
	for _, m := range t.Mappings {
		switch {
		case !m.Group && m.Source == mapUser:
			q, ok, err := t.substitute(m.Queue, user, userGroups)
			if err != nil {
				return requested, false, err
			}
			if ok {
				return q, true, nil
			}
		case !m.Group && m.Source == user:
			return m.Queue, true, nil
		case m.Group:
			gs, err := userGroups()
			if err != nil {
				return requested, false, err
			}
			for _, g := range gs {
				if g == m.Source {
					return m.Queue, true, nil
				}
			}
		}
	}
	return requested, false, nil
}

// substitute resolves a %user mapping's queue for user; false when it names a group the
// user does not have (the next mapping is tried).
func (t *Tree) substitute(queue, user string, groups func() ([]string, error)) (string, bool, error) {
	switch queue {
	case mapUser:
		return user, true, nil
	case mapPrimaryGroup:
		gs, err := groups()
		if err != nil {
			return "", false, err
		}
		return gs[0], true, nil
	case mapSecondaryGroup:
		// The first of the user's other groups that is a queue (Hadoop 3).
		gs, err := groups()
		if err != nil {
			return "", false, err
		}
		for i := 1; i < len(gs); i++ {
			if q, ok := t.byName[gs[i]]; ok && q.IsLeaf() {
				return gs[i], true, nil
			}
		}
		return "", false, nil
	}
	return queue, true, nil
}
