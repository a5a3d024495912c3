// Package rmweb serves the ResourceManager's HTTP endpoints (REST resources, /metrics,
// the optional profiler) from rmcore's state.
package rmweb
