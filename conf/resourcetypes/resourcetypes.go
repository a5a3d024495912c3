// Package resourcetypes reads Hadoop 3.1's resource types — memory-mb and vcores plus
// those resource-types.xml declares (yarn.io/gpu, or any countable type) — and converts
// resources between YARN's protobuf form and a fixed vector indexed by type. Both daemons
// use it: the RM for asks, node capacities and reports, the NM for what it offers.
package resourcetypes

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// The two types every cluster has, at these indexes.
const (
	Memory = 0 // memory-mb, in Mi
	VCores = 1

	MemoryName = "memory-mb"
	VCoresName = "vcores"
	GPUName    = "yarn.io/gpu"
)

// Keys Hadoop 3.1 reads (ResourceUtils): the RM's and clients' types and their allocation
// bounds, and a NodeManager's amount of each.
const (
	KeyTypes      = "yarn.resource-types"
	keyTypePrefix = "yarn.resource-types."
	KeyNodePrefix = "yarn.nodemanager.resource-type."
)

// Type is one resource type.
type Type struct {
	Name  string
	Units string // "" for counts, "Mi" for memory
	// Min and Max bound one container's amount (yarn.resource-types.<name>.minimum-allocation
	// and .maximum-allocation; for memory and vcores the yarn.scheduler keys).
	Min, Max int64
}

// Types are a cluster's resource types in vector order: memory-mb, vcores, then the
// declared ones in the order yarn.resource-types lists them.
type Types struct {
	list  []Type
	index map[string]int
}

// Default has memory-mb and vcores only, as Hadoop 2.x.
func Default() Types {
	return New([]Type{{Name: MemoryName, Units: "Mi", Max: math.MaxInt64}, {Name: VCoresName, Max: math.MaxInt64}})
}

// New builds Types from a list that starts with memory-mb and vcores.
func New(list []Type) Types {
	t := Types{list: list, index: map[string]int{}}
	for i, x := range list {
		t.index[x.Name] = i
	}
	return t
}

// Len is the number of types.
func (t Types) Len() int { return len(t.list) }

// All lists the types in vector order.
func (t Types) All() []Type { return append([]Type(nil), t.list...) }

// Names lists the type names in vector order.
func (t Types) Names() []string {
	out := make([]string, len(t.list))
	for i, x := range t.list {
		out[i] = x.Name
	}
	return out
}

// Index is the vector index of a type name.
func (t Types) Index(name string) (int, bool) {
	i, ok := t.index[name]
	return i, ok
}

// Load reads the resource types from a configuration that has yarn-site.xml and
// resource-types.xml in it (conf.LoadDir adds both). memory-mb and vcores take their
// bounds from the yarn.scheduler.*-allocation-* keys. maxTypes bounds how many types a
// daemon supports; more is an error naming the key.
func Load(c *conf.Configuration, maxTypes int) (Types, error) {
	minMB, err := c.Int64("yarn.scheduler.minimum-allocation-mb")
	if err != nil {
		return Types{}, err
	}
	maxMB, err := c.Int64("yarn.scheduler.maximum-allocation-mb")
	if err != nil {
		return Types{}, err
	}
	minVC, err := c.Int64("yarn.scheduler.minimum-allocation-vcores")
	if err != nil {
		return Types{}, err
	}
	maxVC, err := c.Int64("yarn.scheduler.maximum-allocation-vcores")
	if err != nil {
		return Types{}, err
	}
	list := []Type{{Name: MemoryName, Units: "Mi", Min: minMB, Max: maxMB}, {Name: VCoresName, Min: minVC, Max: maxVC}}
	names, err := c.Strings(KeyTypes)
	if err != nil {
		return Types{}, err
	}
	raw, _ := c.Raw(KeyTypes)
	seen := map[string]bool{MemoryName: true, VCoresName: true}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if seen[n] {
			if n == MemoryName || n == VCoresName {
				continue // Hadoop accepts the mandatory types listed again
			}
			return Types{}, &conf.ValueError{Source: c.Source(KeyTypes), Key: KeyTypes, Value: raw, Reason: fmt.Sprintf("resource type %s is listed twice", n)}
		}
		seen[n] = true
		if !validName(n) {
			return Types{}, &conf.ValueError{Source: c.Source(KeyTypes), Key: KeyTypes, Value: raw, Reason: fmt.Sprintf("%q is not a valid resource type name (letters, digits, '.', '-', '_' and one optional prefix ending in '/')", n)}
		}
		ty := Type{Name: n, Max: math.MaxInt64}
		if ty.Units, err = c.Trimmed(keyTypePrefix + n + ".units"); err != nil {
			return Types{}, err
		}
		if _, ok := unitScale(ty.Units); !ok {
			return Types{}, &conf.ValueError{Source: c.Source(keyTypePrefix + n + ".units"), Key: keyTypePrefix + n + ".units", Value: ty.Units, Reason: "unknown unit; known units are " + knownUnits}
		}
		for key, dst := range map[string]*int64{keyTypePrefix + n + ".minimum-allocation": &ty.Min, keyTypePrefix + n + ".maximum-allocation": &ty.Max} {
			if _, ok := c.Raw(key); !ok {
				continue
			}
			v, err := c.Int64(key)
			if err != nil {
				return Types{}, err
			}
			*dst = v
		}
		if ty.Min < 0 || ty.Min > ty.Max {
			return Types{}, fmt.Errorf("conf: resource type %s: minimum-allocation %d must be between 0 and maximum-allocation %d", n, ty.Min, ty.Max)
		}
		list = append(list, ty)
	}
	if len(list) > maxTypes {
		return Types{}, &conf.ValueError{Source: c.Source(KeyTypes), Key: KeyTypes, Value: raw,
			Reason: fmt.Sprintf("%d resource types with memory-mb and vcores; Bobbin supports at most %d", len(list), maxTypes)}
	}
	return New(list), nil
}

// validName follows Hadoop's ResourceUtils.validateNameOfResourceNameAndThrowException: an
// optional DNS-like prefix ending in '/', then a name of letters, digits, '.', '-', '_'.
func validName(n string) bool {
	name := n
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		prefix := n[:i]
		if prefix == "" || strings.ContainsAny(prefix, "/") {
			return false
		}
		name = n[i+1:]
	}
	if name == "" {
		return false
	}
	for _, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '/':
		default:
			return false
		}
	}
	return true
}

// NodeAmounts reads what a NodeManager offers of each extra type:
// yarn.nodemanager.resource-type.<name> (yarn-site.xml or node-resources.xml), a number
// with an optional unit ("2", "4Gi"), converted to the type's units; unset is 0.
func NodeAmounts(c *conf.Configuration, t Types) ([]int64, error) {
	out := make([]int64, t.Len())
	for i, ty := range t.list {
		if i < 2 {
			continue
		}
		key := KeyNodePrefix + ty.Name
		raw, ok := c.Raw(key)
		if !ok {
			continue
		}
		v, err := c.Trimmed(key)
		if err != nil {
			return nil, err
		}
		n, units, err := ParseValue(v)
		if err == nil {
			n, err = Convert(n, units, ty.Units)
		}
		if err != nil || n < 0 {
			if err == nil {
				err = fmt.Errorf("negative")
			}
			return nil, &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: fmt.Sprintf("not an amount of %s (%v)", ty.Name, err)}
		}
		out[i] = n
	}
	return out, nil
}

// ParseValue splits "4Gi" into 4 and "Gi", as Hadoop's ResourceUtils.parseResourceValue.
func ParseValue(s string) (int64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || (i == 0 && s[i] == '-')) {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q is not a number with an optional unit", s)
	}
	return n, s[i:], nil
}

const knownUnits = "p, n, u, m, (none), k, M, G, T, P, Ki, Mi, Gi, Ti, Pi"

// unitScale is a unit's size in the smallest unit (pico), as an exact rational.
func unitScale(u string) (*big.Int, bool) {
	dec := map[string]int64{"p": 0, "n": 3, "u": 6, "m": 9, "": 12, "k": 15, "M": 18, "G": 21, "T": 24, "P": 27}
	if e, ok := dec[u]; ok {
		return new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil), true
	}
	bin := map[string]int64{"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5}
	if e, ok := bin[u]; ok {
		s := new(big.Int).Exp(big.NewInt(1024), big.NewInt(e), nil)
		return s.Mul(s, new(big.Int).Exp(big.NewInt(10), big.NewInt(12), nil)), true
	}
	return nil, false
}

// Convert expresses v in unit from as a whole number of unit to, rounding down as Hadoop's
// UnitsConversionUtil.convert does.
func Convert(v int64, from, to string) (int64, error) {
	if from == to {
		return v, nil
	}
	fs, ok1 := unitScale(from)
	ts, ok2 := unitScale(to)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("unknown unit %q or %q; known units are %s", from, to, knownUnits)
	}
	r := new(big.Int).Mul(big.NewInt(v), fs)
	r.Quo(r, ts)
	if !r.IsInt64() {
		return 0, fmt.Errorf("%d%s overflows in %q", v, from, to)
	}
	return r.Int64(), nil
}

// FromProto reads a ResourceProto into a vector of n = t.Len() amounts: memory and vcores
// from fields 1 and 2 (what every client fills), the others from resource_value_map in
// the type's units. Unknown types are returned by name so callers can refuse or ignore
// them as Hadoop does.
func (t Types) FromProto(r *yarnpb.ResourceProto, dst []int64) (unknown []string, err error) {
	dst[Memory], dst[VCores] = r.GetMemory(), int64(r.GetVirtualCores())
	for _, e := range r.GetResourceValueMap() {
		i, ok := t.index[e.GetKey()]
		if !ok {
			unknown = append(unknown, e.GetKey())
			continue
		}
		if i < 2 {
			continue
		}
		v, err := Convert(e.GetValue(), e.GetUnits(), t.list[i].Units)
		if err != nil {
			return unknown, fmt.Errorf("resource %s: %w", e.GetKey(), err)
		}
		dst[i] = v
	}
	return unknown, nil
}

// Proto builds a ResourceProto from a vector: memory and vcores in fields 1 and 2, and,
// when the cluster has more types, every type in resource_value_map as a 3.x peer writes
// it (2.x peers skip the field).
func (t Types) Proto(v []int64) *yarnpb.ResourceProto {
	r := &yarnpb.ResourceProto{Memory: proto.Int64(v[Memory]), VirtualCores: proto.Int32(int32(v[VCores]))}
	if len(t.list) > 2 {
		r.ResourceValueMap = make([]*yarnpb.ResourceInformationProto, len(t.list))
		for i, ty := range t.list {
			r.ResourceValueMap[i] = &yarnpb.ResourceInformationProto{Key: proto.String(ty.Name), Value: proto.Int64(v[i]),
				Units: proto.String(ty.Units), Type: yarnpb.ResourceTypesProto_COUNTABLE.Enum()}
		}
	}
	return r
}

// Format prints amounts as Hadoop prints a Resource: <memory:1024, vCores:2, yarn.io/gpu: 2>.
func (t Types) Format(v []int64) string {
	var b strings.Builder
	b.WriteString("<")
	for i, ty := range t.list {
		switch i {
		case Memory:
			fmt.Fprintf(&b, "memory:%d", v[i])
		case VCores:
			fmt.Fprintf(&b, ", vCores:%d", v[i])
		default:
			fmt.Fprintf(&b, ", %s: %d", ty.Name, v[i])
		}
	}
	b.WriteString(">")
	return b.String()
}

// InfoProtos are the types as getResourceTypeInfo and RegisterApplicationMaster list them.
func (t Types) InfoProtos() []*yarnpb.ResourceTypeInfoProto {
	out := make([]*yarnpb.ResourceTypeInfoProto, len(t.list))
	for i, ty := range t.list {
		out[i] = &yarnpb.ResourceTypeInfoProto{Name: proto.String(ty.Name), Units: proto.String(ty.Units), Type: yarnpb.ResourceTypesProto_COUNTABLE.Enum()}
	}
	return out
}
