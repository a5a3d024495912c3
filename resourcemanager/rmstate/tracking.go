package rmstate

// trackingURL is what reports give as an attempt's tracking URL: the web proxy's page
// for the application, or an unmanaged AM's own URL; an attempt that ended without
// unregistering (killed, failed) has the RM's application page, as in the Java RM.
func (at *Attempt) trackingURL(a *App, web webBases) string {
	if u, ok := at.rmPage(a, web); ok {
		return u
	}
	if a.Unmanaged || web.proxy == "" {
		return cmpOrString(at.TrackingURL, "N/A")
	}
	return web.proxy + "/proxy/" + a.ID.String() + "/"
}

// originalURL is the URL the proxy follows: what the AM registered (N/A for none), or
// the RM's application page for an attempt that ended without unregistering.
func (at *Attempt) originalURL(a *App, web webBases) string {
	if u, ok := at.rmPage(a, web); ok {
		return u
	}
	return cmpOrString(at.TrackingURL, "N/A")
}

func (at *Attempt) rmPage(a *App, web webBases) (string, bool) {
	if !at.Ended() || at.Unregistered || web.rm == "" {
		return "", false
	}
	return web.rm + "/cluster/app/" + a.ID.String(), true
}

// SetWebBases sets the "http://host:port" of the web proxy tracking URLs point to and of
// the RM's web pages (an application's page is the tracking URL of an attempt that ended
// without unregistering).
func (r *Apps) SetWebBases(proxy, rm string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.web = webBases{proxy: proxy, rm: rm}
}

// webBases are where tracking URLs point: the web proxy and the RM's own pages.
type webBases struct{ proxy, rm string }
