// Package webui is what the daemons' web pages share: the layout, the stylesheet and the
// script (embedded: no build step, no CDN), and the template functions. Each daemon's
// pages are templates that define "content".
package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed layout.html static
var files embed.FS

// Static serves /static/ (the stylesheet and the script).
func Static() http.Handler {
	sub, _ := fs.Sub(files, "static")
	return http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
}

// Link is an entry of the navigation bar.
type Link struct {
	Href, Text string
	Active     bool
}

// Nav is the navigation bar with the entry whose Href is active marked.
func Nav(active string, links ...Link) []Link {
	for i := range links {
		links[i].Active = links[i].Href == active
	}
	return links
}

// Page is what the layout shows around a page's content.
type Page struct {
	Title, Daemon, Host string
	Started             time.Time
	Nav                 []Link
	Data                any
}

// Funcs are the helpers templates use.
var Funcs = template.FuncMap{
	"time": func(v any) string {
		switch t := v.(type) {
		case time.Time:
			if t.IsZero() {
				return "N/A"
			}
			return t.Local().Format("2006-01-02 15:04:05")
		case int64:
			if t <= 0 {
				return "N/A"
			}
			return time.UnixMilli(t).Local().Format("2006-01-02 15:04:05")
		}
		return fmt.Sprint(v)
	},
	"dur": func(ms int64) string {
		if ms < 0 {
			return "N/A"
		}
		d := time.Duration(ms) * time.Millisecond
		switch {
		case d < time.Minute:
			return fmt.Sprintf("%.1fs", d.Seconds())
		case d < time.Hour:
			return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
		}
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	},
	"mb": func(v int64) string {
		if v >= 10*1024 {
			return fmt.Sprintf("%.1f GB", float64(v)/1024)
		}
		return fmt.Sprintf("%d MB", v)
	},
	"pct":  func(v float64) string { return fmt.Sprintf("%.1f%%", v) },
	"clip": func(v float64) float64 { return max(0, min(100, v)) },
	"join": strings.Join,
	"add":  func(a, b int) int { return a + b },
}

// Templates parses, for each page file of pages, the layout with it: one template set
// per page, keyed by the file's name.
func Templates(pages fs.FS, names ...string) (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, n := range names {
		t, err := template.New(n).Funcs(Funcs).ParseFS(files, "layout.html")
		if err != nil {
			return nil, err
		}
		if t, err = t.ParseFS(pages, n); err != nil {
			return nil, fmt.Errorf("webui: %s: %w", n, err)
		}
		out[n] = t
	}
	return out, nil
}

// Render writes page p with template t, or a 500 naming the error (nothing half-written).
func Render(w http.ResponseWriter, t *template.Template, status int, p Page) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		http.Error(w, "rendering "+p.Title+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
