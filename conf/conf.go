// Package conf reads Hadoop XML configuration the way Hadoop's Configuration does:
// built-in defaults, then core-site.xml and yarn-site.xml from the configuration directory,
// with `final` properties and ${var} expansion. Typed getters report bad values with the
// file, key and value.
package conf

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/beevik/etree"
)

// SourceDefault names values that come from Bobbin's built-in defaults.
const SourceDefault = "built-in default"

type property struct {
	value  string
	source string // file path, or SourceDefault, or "set"
	final  bool
}

// Configuration is an ordered set of Hadoop properties. It is not safe for concurrent
// mutation; daemons load it once and then only read it.
type Configuration struct {
	props map[string]property
	env   func(string) (string, bool)
	// Warnings collects non-fatal findings (e.g. an attempt to override a final property),
	// for the daemon to log.
	Warnings []string
	// reads, when set (Track), records every key looked up, in this configuration and its
	// clones: bobbin check-config tells the keys Bobbin reads from those it does not.
	reads *readSet
}

// readSet is the keys a tracked configuration was asked for.
type readSet struct {
	mu   sync.Mutex
	keys map[string]bool
}

// Track starts recording the keys looked up in c and in clones made from now on.
func (c *Configuration) Track() { c.reads = &readSet{keys: map[string]bool{}} }

// Read reports whether key was looked up since Track (false when c is not tracked).
func (c *Configuration) Read(key string) bool {
	return c.reads != nil && c.reads.has(key)
}

func (r *readSet) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[key]
}

func (r *readSet) add(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys[key] = true
}

// note records a lookup of key when c is tracked.
func (c *Configuration) note(key string) {
	if c.reads != nil {
		c.reads.add(key)
	}
}

// New returns a configuration holding only Bobbin's built-in defaults.
func New() *Configuration {
	c := Empty()
	for _, d := range Defaults {
		c.props[d.Key] = property{value: d.Value, source: SourceDefault}
	}
	return c
}

// Empty returns a configuration with no properties at all.
func Empty() *Configuration {
	return &Configuration{props: map[string]property{}, env: os.LookupEnv}
}

// Clone returns an independent copy.
func (c *Configuration) Clone() *Configuration {
	n := &Configuration{props: make(map[string]property, len(c.props)), env: c.env, reads: c.reads}
	for k, v := range c.props {
		n.props[k] = v
	}
	n.Warnings = append([]string(nil), c.Warnings...)
	return n
}

// SetEnv replaces the environment lookup used by ${env.X} expansion (tests).
func (c *Configuration) SetEnv(lookup func(string) (string, bool)) { c.env = lookup }

// Set sets a property programmatically (command-line overrides, tests). It ignores final.
func (c *Configuration) Set(key, value string) {
	c.props[key] = property{value: value, source: "set"}
}

// Raw returns the unexpanded value.
func (c *Configuration) Raw(key string) (string, bool) {
	c.note(key)
	p, ok := c.props[key]
	return p.value, ok
}

// Source names where key's value came from.
func (c *Configuration) Source(key string) string {
	if p, ok := c.props[key]; ok {
		return p.source
	}
	return "unset"
}

// Keys returns every key, sorted.
func (c *Configuration) Keys() []string {
	keys := make([]string, 0, len(c.props))
	for k := range c.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LoadDir resolves the configuration directory (explicit dir, else YARN_CONF_DIR, else
// HADOOP_CONF_DIR) and loads core-site.xml, yarn-site.xml, resource-types.xml and
// node-resources.xml from it over the defaults.
// Missing site files are skipped, as Hadoop skips missing default resources; a missing
// directory that was asked for is an error. It returns the directory used ("" for none).
func LoadDir(dir string, extra ...string) (*Configuration, string, error) {
	dir = ResolveDir(dir)
	c := New()
	if dir == "" {
		return c, "", nil
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, dir, fmt.Errorf("configuration directory: %w", err)
	} else if !st.IsDir() {
		return nil, dir, fmt.Errorf("configuration directory %s is not a directory", dir)
	}
	// Hadoop 3.1's ResourceUtils adds resource-types.xml (the RM's and clients' resource
	// types) and node-resources.xml (a NodeManager's amounts of them) over yarn-site.xml.
	for _, name := range append([]string{"core-site.xml", "yarn-site.xml", "resource-types.xml", "node-resources.xml"}, extra...) {
		if err := c.AddFileIfExists(filepath.Join(dir, name)); err != nil {
			return nil, dir, err
		}
	}
	return c, dir, nil
}

// NodeManagerFiles are the site files a NodeManager reads over LoadDir's, in this order:
// the Java NM's configuration takes mapred-site.xml once its shuffle service builds a
// JobConf (so mapreduce.shuffle.* set there win over yarn-site.xml) and hdfs-site.xml
// once its HDFS client loads (localization and log aggregation on hdfs://).
func NodeManagerFiles() []string { return []string{"mapred-site.xml", "hdfs-site.xml"} }

// ResourceManagerFiles are the site files a ResourceManager reads over LoadDir's:
// hdfs-site.xml, which the Java RM's HDFS client loads (the NameNodes of a nameservice,
// dfs.namenode.kerberos.principal for renewing applications' HDFS delegation tokens, the
// HDFS that aggregated logs are deleted from).
func ResourceManagerFiles() []string { return []string{"hdfs-site.xml"} }

// ResolveDir applies the --conf / YARN_CONF_DIR / HADOOP_CONF_DIR precedence.
func ResolveDir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if d := os.Getenv("YARN_CONF_DIR"); d != "" {
		return d
	}
	return os.Getenv("HADOOP_CONF_DIR")
}

// AddFileIfExists adds a resource file; a file that does not exist is skipped.
func (c *Configuration) AddFileIfExists(path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return c.AddFile(path)
}

// AddFile parses a Hadoop configuration XML file and lays its properties over the current
// ones. Nothing is applied if the file has any error.
func (c *Configuration) AddFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("conf: %w", err)
	}
	return c.AddXML(path, data)
}

// AddXML is AddFile for bytes already read; name labels errors.
func (c *Configuration) AddXML(name string, data []byte) error {
	props, err := parseResource(name, data, 0)
	if err != nil {
		return err
	}
	for i := 0; i < len(props); i++ { // the deprecations below add to props
		p := props[i]
		if now, ok := Deprecated[p.key]; ok {
			// As Hadoop's deprecation table: the old name sets the new one too.
			props = append(props, parsedProp{key: now, value: p.value, final: p.final})
		}
		old, ok := c.props[p.key]
		if ok && old.final && old.source != SourceDefault {
			if old.value != p.value {
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s: attempt to override final parameter %s (final in %s); ignoring", name, p.key, old.source))
			}
			continue
		}
		c.props[p.key] = property{value: p.value, source: name, final: p.final}
	}
	return nil
}

// Deprecated maps old key names Bobbin still honours to their current names (Hadoop's
// Configuration deprecations): a file setting the old name sets the new one.
var Deprecated = map[string]string{
	"fs.default.name": "fs.defaultFS",
}

type parsedProp struct {
	key, value string
	final      bool
}

const maxIncludeDepth = 8

func parseResource(name string, data []byte, depth int) ([]parsedProp, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, fmt.Errorf("conf: %s: malformed XML: %w", name, err)
	}
	root := doc.Root()
	if root == nil {
		return nil, fmt.Errorf("conf: %s: no root element", name)
	}
	if root.Tag != "configuration" {
		return nil, fmt.Errorf("conf: %s: root element is <%s>, not <configuration>", name, root.FullTag())
	}
	return parseElements(name, root, depth)
}

func parseElements(name string, parent *etree.Element, depth int) ([]parsedProp, error) {
	var out []parsedProp
	var errs []error
	for i, el := range parent.ChildElements() {
		switch {
		case el.Tag == "property":
			p, err := parseProperty(name, i+1, el)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, p)
		case el.Tag == "configuration": // nested, as Hadoop allows
			sub, err := parseElements(name, el, depth)
			if err != nil {
				errs = append(errs, err)
			}
			out = append(out, sub...)
		case el.Tag == "include" && (el.Space == "xi" || strings.Contains(el.NamespaceURI(), "XInclude")):
			sub, err := parseInclude(name, el, depth)
			if err != nil {
				errs = append(errs, err)
			}
			out = append(out, sub...)
		default:
			errs = append(errs, fmt.Errorf("conf: %s: element %d is <%s>, not <property>", name, i+1, el.FullTag()))
		}
	}
	return out, errors.Join(errs...)
}

// parseInclude follows <xi:include href="..."> relative to the including file, using the
// <xi:fallback> children when the file is missing.
func parseInclude(name string, el *etree.Element, depth int) ([]parsedProp, error) {
	if depth >= maxIncludeDepth {
		return nil, fmt.Errorf("conf: %s: xi:include nested deeper than %d", name, maxIncludeDepth)
	}
	href := el.SelectAttrValue("href", "")
	if href == "" {
		return nil, fmt.Errorf("conf: %s: xi:include without href", name)
	}
	path := href
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(name), href)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		for _, fb := range el.ChildElements() {
			if fb.Tag == "fallback" {
				return parseElements(name, fb, depth+1)
			}
		}
		return nil, fmt.Errorf("conf: %s: xi:include %s: %w", name, href, err)
	}
	return parseResource(path, data, depth+1)
}

func parseProperty(name string, index int, el *etree.Element) (parsedProp, error) {
	var p parsedProp
	var haveName bool
	for _, f := range el.ChildElements() {
		text := f.Text()
		switch f.Tag {
		case "name":
			p.key = strings.TrimSpace(text)
			haveName = true
		case "value":
			p.value = text // Hadoop keeps values as written (getTrimmed trims on read)
		case "final":
			switch strings.TrimSpace(text) {
			case "true":
				p.final = true
			case "false", "":
			default:
				return p, fmt.Errorf("conf: %s: property %d (%s): <final> is %q, not true or false", name, index, p.key, text)
			}
		case "description", "source", "tag":
		default:
			return p, fmt.Errorf("conf: %s: property %d: unexpected element <%s>", name, index, f.FullTag())
		}
	}
	// Attributes are the other form Hadoop accepts: <property name="k" value="v"/>.
	if a := el.SelectAttr("name"); a != nil {
		p.key, haveName = strings.TrimSpace(a.Value), true
	}
	if a := el.SelectAttr("value"); a != nil {
		p.value = a.Value
	}
	if !haveName || p.key == "" {
		return p, fmt.Errorf("conf: %s: property %d has no <name>", name, index)
	}
	return p, nil
}

// systemProperty emulates the Java system properties Hadoop configurations refer to.
func systemProperty(name string) (string, bool) {
	switch name {
	case "user.name":
		if u, err := user.Current(); err == nil {
			return u.Username, true
		}
		return os.Getenv("USER"), true
	case "user.home":
		h, err := os.UserHomeDir()
		return h, err == nil
	case "user.dir":
		d, err := os.Getwd()
		return d, err == nil
	case "java.io.tmpdir":
		return "/tmp", true
	case "file.separator":
		return "/", true
	case "path.separator":
		return ":", true
	}
	return "", false
}
