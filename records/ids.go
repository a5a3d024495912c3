// Package records formats and parses YARN's id strings and converts them to and from
// their protobuf records. Clients parse these strings, so the formats are exact
// (protocol.md §7.1).
package records

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
)

// ApplicationID is application_<clusterTimestamp>_<id, at least 4 digits>.
type ApplicationID struct {
	ClusterTimestamp int64
	ID               int32
}

func (a ApplicationID) String() string {
	return fmt.Sprintf("application_%d_%04d", a.ClusterTimestamp, a.ID)
}

// Proto converts to ApplicationIdProto.
func (a ApplicationID) Proto() *yarnpb.ApplicationIdProto {
	return &yarnpb.ApplicationIdProto{Id: proto.Int32(a.ID), ClusterTimestamp: proto.Int64(a.ClusterTimestamp)}
}

// AppIDFromProto converts from ApplicationIdProto.
func AppIDFromProto(p *yarnpb.ApplicationIdProto) ApplicationID {
	return ApplicationID{ClusterTimestamp: p.GetClusterTimestamp(), ID: p.GetId()}
}

// ParseApplicationID parses application_<ts>_<id>.
func ParseApplicationID(s string) (ApplicationID, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 3 || parts[0] != "application" {
		return ApplicationID{}, fmt.Errorf("invalid ApplicationId: %s", s)
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	id, err2 := strconv.ParseInt(parts[2], 10, 32)
	if err1 != nil || err2 != nil || ts < 0 || id < 0 {
		return ApplicationID{}, fmt.Errorf("invalid ApplicationId: %s", s)
	}
	return ApplicationID{ClusterTimestamp: ts, ID: int32(id)}, nil
}

// ParseAttemptID parses appattempt_<ts>_<app>_<attempt>.
func ParseAttemptID(s string) (AttemptID, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 4 || parts[0] != "appattempt" {
		return AttemptID{}, fmt.Errorf("invalid AppAttemptId: %s", s)
	}
	ts, err1 := strconv.ParseInt(parts[1], 10, 64)
	app, err2 := strconv.ParseInt(parts[2], 10, 32)
	att, err3 := strconv.ParseInt(parts[3], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil || ts < 0 || app < 0 || att < 0 {
		return AttemptID{}, fmt.Errorf("invalid AppAttemptId: %s", s)
	}
	return AttemptID{App: ApplicationID{ClusterTimestamp: ts, ID: int32(app)}, Attempt: int32(att)}, nil
}

// AttemptID is appattempt_<ts>_<app 4+>_<attempt 6+>.
type AttemptID struct {
	App     ApplicationID
	Attempt int32
}

func (a AttemptID) String() string {
	return fmt.Sprintf("appattempt_%d_%04d_%06d", a.App.ClusterTimestamp, a.App.ID, a.Attempt)
}

// Proto converts to ApplicationAttemptIdProto.
func (a AttemptID) Proto() *yarnpb.ApplicationAttemptIdProto {
	return &yarnpb.ApplicationAttemptIdProto{ApplicationId: a.App.Proto(), AttemptId: proto.Int32(a.Attempt)}
}

// AppendProto appends the bytes of a.Proto()'s message.
func (a AttemptID) AppendProto(b []byte) []byte {
	b, _ = wire.AppendMessage(b, 1, func(b []byte) []byte { // application_id
		b = wire.AppendInt32(b, 1, a.App.ID)
		return wire.AppendInt64(b, 2, a.App.ClusterTimestamp)
	})
	return wire.AppendInt32(b, 2, a.Attempt)
}

// AttemptIDFromProto converts from ApplicationAttemptIdProto.
func AttemptIDFromProto(p *yarnpb.ApplicationAttemptIdProto) AttemptID {
	return AttemptID{App: AppIDFromProto(p.GetApplicationId()), Attempt: p.GetAttemptId()}
}

// ContainerID is container_[e<epoch>_]<ts>_<app 4+>_<attempt 2+>_<seq 6+>; the id number
// packs (epoch << 40) | sequence.
type ContainerID struct {
	Attempt AttemptID
	ID      int64
}

func (c ContainerID) String() string {
	return string(c.AppendString(make([]byte, 0, 48)))
}

// AppendString appends c as String writes it, without fmt: the RM writes every container's
// id in its log lines, a hundred thousand a second when busy.
func (c ContainerID) AppendString(b []byte) []byte {
	epoch, seq := c.ID>>40, c.ID&(1<<40-1)
	b = append(b, "container_"...)
	if epoch > 0 {
		b = append(b, 'e')
		b = appendPadded(b, epoch, 2)
		b = append(b, '_')
	}
	b = strconv.AppendInt(b, c.Attempt.App.ClusterTimestamp, 10)
	b = append(b, '_')
	b = appendPadded(b, int64(c.Attempt.App.ID), 4)
	b = append(b, '_')
	b = appendPadded(b, int64(c.Attempt.Attempt), 2)
	b = append(b, '_')
	return appendPadded(b, seq, 6)
}

// appendPadded appends v as fmt's %0<width>d does: zeros after the sign up to width.
func appendPadded(b []byte, v int64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	if v < 0 {
		b = append(b, '-')
		d = d[1:]
		width--
	}
	for i := len(d); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// Proto converts to ContainerIdProto (Java sets only app_attempt_id and id).
func (c ContainerID) Proto() *yarnpb.ContainerIdProto {
	return &yarnpb.ContainerIdProto{AppAttemptId: c.Attempt.Proto(), Id: proto.Int64(c.ID)}
}

// AppendProto appends the bytes of c.Proto()'s message.
func (c ContainerID) AppendProto(b []byte) []byte {
	b, _ = wire.AppendMessage(b, 2, c.Attempt.AppendProto) // app_attempt_id
	return wire.AppendInt64(b, 3, c.ID)
}

// ContainerIDFromProto converts from ContainerIdProto.
func ContainerIDFromProto(p *yarnpb.ContainerIdProto) ContainerID {
	return ContainerID{Attempt: AttemptIDFromProto(p.GetAppAttemptId()), ID: p.GetId()}
}

// ParseContainerID parses a container id string, with or without the epoch part.
func ParseContainerID(s string) (ContainerID, error) {
	parts := strings.Split(s, "_")
	bad := fmt.Errorf("invalid ContainerId: %s", s)
	if len(parts) < 5 || parts[0] != "container" {
		return ContainerID{}, bad
	}
	var epoch int64
	if strings.HasPrefix(parts[1], "e") {
		e, err := strconv.ParseInt(parts[1][1:], 10, 64)
		if err != nil || e < 0 || e >= 1<<23 {
			return ContainerID{}, bad
		}
		epoch, parts = e, append(parts[:1], parts[2:]...)
	}
	if len(parts) != 5 {
		return ContainerID{}, bad
	}
	ts, e1 := strconv.ParseInt(parts[1], 10, 64)
	app, e2 := strconv.ParseInt(parts[2], 10, 32)
	att, e3 := strconv.ParseInt(parts[3], 10, 32)
	seq, e4 := strconv.ParseInt(parts[4], 10, 64)
	if e1 != nil || e2 != nil || e3 != nil || e4 != nil || seq < 0 || seq >= 1<<40 {
		return ContainerID{}, bad
	}
	return ContainerID{Attempt: AttemptID{App: ApplicationID{ts, int32(app)}, Attempt: int32(att)}, ID: epoch<<40 | seq}, nil
}

// Attempt returns the n-th attempt of the application.
func (a ApplicationID) Attempt(n int32) AttemptID { return AttemptID{App: a, Attempt: n} }

// NodeIDFromKey is the NodeId a "host:port" key names (port 0 when it has none: a whole
// host, as node-label administration uses it).
func NodeIDFromKey(key string) *yarnpb.NodeIdProto {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return &yarnpb.NodeIdProto{Host: proto.String(key), Port: proto.Int32(0)}
	}
	port, _ := strconv.Atoi(key[i+1:])
	return &yarnpb.NodeIdProto{Host: proto.String(key[:i]), Port: proto.Int32(int32(port))}
}
